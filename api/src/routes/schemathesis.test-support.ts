// Schemathesis (pinned in api/fuzz/requirements.txt, installed by scripts/ensure-fuzzer.sh into the
// git-ignored .fuzz-venv/) run against a real API, and its findings read back: shared by the fuzzing of
// every operation (openapiFuzz.test.ts) and the stateful sequences along the document's links
// (openapiStatefulFuzz.test.ts). docs/dev/testing.md says what is forgiven and why.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomInt } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "../../..");

/** Examples per operation and phase; FUZZ_EXAMPLES runs longer. */
export const FUZZ_EXAMPLES = Number(process.env.FUZZ_EXAMPLES ?? 5);

/**
 * A new seed each run, so every run meets other inputs (one seed for ever never found the duplicate-kind
 * 500 another seed did); printed, and named by a failure, so FUZZ_SEED=<it> replays that run.
 */
export const FUZZ_SEED = process.env.FUZZ_SEED ?? String(randomInt(1, 2 ** 31));

/** Installs the fuzzer when missing (the project's own script) and answers the path of its command. */
export function ensureSchemathesis(): string {
  const install = spawnSync("sh", [join(root, "scripts/ensure-fuzzer.sh")], { encoding: "utf8" });
  if (install.status !== 0) throw new Error(`installing the fuzzer failed:\n${install.stderr}`);
  return install.stdout.trim().split("\n").at(-1) ?? "";
}

export interface Failure {
  operation: string;
  check: string;
  detail: string;
}

/**
 * Refusals of schema-valid input that are not the document understating a format: rules across fields
 * or about state that JSON Schema cannot say ("give at least one field", "to after from", a reference to
 * an object that does not exist, a weak password, U+0000 that Postgres cannot store). Every other refusal of
 * a valid request fails. A valid Idempotency-Key is made fresh at each call (api/fuzz/hooks.py).
 */
const NOT_EXPRESSIBLE = new Set([
  "custom",
  // Across fields: a range's order and length, a field one value of another requires (fair-share
  // guarantees only in an organization's or a project's policy, not a global one: seed 476550684).
  "invalid_scope",
  "range_order",
  "range_too_long",
  "required",
  "invalid_fraction",
  "invalid_reference",
  "not_found",
  "critical_kind",
  // Node pools: "send at least one field" and "exactly one of organization_id and project_id".
  "empty_body",
  "one_grantee",
  // A monitoring query's own language (PromQL), which the metrics server parses.
  "query_refused",
  // An array whose items name one kind (or share) twice: JSON Schema's uniqueItems compares whole items.
  "duplicate_kind",
  "duplicate",
  // A MIG offering's count and fraction (one instance, not also a fraction), and a project's guarantee
  // over its organization's: rules across fields and across policies.
  "invalid_mig",
  "over_organization",
  // Trusted signing keys whose names repeat (their keys differ, so uniqueItems cannot see it), and required
  // signatures with no key at all while the installation has none of its own (its configuration).
  "duplicate_name",
  "no_trusted_key",
  "invalid_credential",
  "password_unchanged",
  "common_password",
  "repeated_characters",
  "sequence",
  "nul_character",
]);
const FORGIVEN_CODES = new Set([
  // An export's range, from and to together (at most 366 days): a rule across two fields, found by a
  // seed other than the one the suite used for months.
  "export_too_large",
  // The platform's state, not the request's shape: no cluster marked for builds; a slice's memory, which
  // depends on the card memory and the fraction together.
  "no_build_cluster",
  // Marking a cluster for builds whose registered credential may not run them: the cluster's state.
  "build_cluster_not_ready",
  "gpu_slice_too_small",
  // A label selector's grammar (`key=value`, `key in (a,b)`, Kubernetes' key and value rules) inside a string.
  "node_selector_invalid",
  // A CSV file inside a string: its grammar (quotes, columns, a header) is not JSON Schema's to state.
  "import_csv_malformed",
  "webhook_target_forbidden",
  "bad_request",
  "gpu_model_unavailable",
  // The platform's state: an administrator required signatures (a fuzzed settings change may do so).
  "image_unsigned",
  // MIG: a profile is one of the card model's (a rule across two fields), a layout's instances fit one card
  // (a sum over its entries), and a profile is free on a marked node (the platform's state).
  "mig_profile_not_for_model",
  "mig_layout_overfilled",
  "mig_profile_unavailable",
  // Fair-share guarantees add up per GPU model to no more than the fleet has (seed 1617031332: a guarantee on a
  // model no cluster reports): the platform's state and a sum across policies.
  "guarantee_unsatisfiable",
]);

export function forgiven(f: Failure): boolean {
  // Schemathesis' 10-second response-time check (ST112, in "all"): a timing, not the contract's shape. On a
  // loaded machine a page took 14 s (seed 1091302986); response times are measured by bench/, not here.
  if (f.check === "ST112") return true;
  // Hypothesis replays a case and finds another answer: the server has state (a create is 201, then 409).
  if (f.check === "error") return /Inconsistent results: A test case failed on the first run/.test(f.detail);
  if (f.check !== "ST202" && f.check !== "ST201") return false;
  const body = /`(\{"error".*\})`/.exec(f.detail)?.[1];
  if (!body) return false;
  const e = JSON.parse(body).error as { code: string; details?: { issues?: { code: string; path?: unknown[] }[] } };
  // A schema-violating body over the size limit is refused 413 before its schema is read, a refusal the
  // check does not list (seed 1361215873: a `ca_data` past its maxLength and past 1 MiB).
  if (f.check === "ST201") return e.code === "payload_too_large";
  if (FORGIVEN_CODES.has(e.code)) return true;
  const issues = e.details?.issues ?? [];
  // A whole image reference (registry, port, path, tag, digest) is a grammar the API parses as registries
  // do; its parts Berth names itself (name, tag) state theirs as patterns and are not forgiven.
  if (e.code === "image_reference_invalid" && issues.length > 0)
    return issues.every((i) => i.path?.at(-1) === "reference");
  return e.code === "validation_failed" && issues.length > 0 && issues.every((i) => NOT_EXPRESSIBLE.has(i.code));
}

const running = new Set<ChildProcess>();

/** Stops every Schemathesis still running (a test that timed out must not leave one behind). */
export function stopSchemathesis(): void {
  for (const child of running) child.kill("SIGKILL");
}

export interface FuzzRun {
  failures: Failure[];
  output: string;
  /** Operations Schemathesis tested (its JUnit cases). */
  operations: number;
  /** Requests sent and evaluated (the WFC report's evaluated HTTP calls). */
  requests: number;
  /** Every status each operation answered, by operation ("POST /api/v1/sessions"). */
  statuses: Map<string, (number | null)[]>;
  /** Stateful phase: links followed, as Schemathesis counts them ("12 covered / 80 selected / 80 total"). */
  links?: string;
}

/** Runs Schemathesis as one caller (a bearer token) over the served document; answers what it found. */
export async function runSchemathesis(opts: {
  command: string;
  apiUrl: string;
  token: string;
  as: string;
  phases: string;
  dir: string;
  examples?: number;
  /** Stops generating after this long and reports what ran (Schemathesis' --max-time). */
  maxSeconds?: number;
}): Promise<FuzzRun> {
  const reportDir = join(opts.dir, opts.as);
  mkdirSync(reportDir, { recursive: true });
  const args = [
    "--config-file",
    join(root, "api/fuzz/schemathesis.toml"),
    "run",
    // The committed document, which the API serves byte for byte (system.test.ts): building it again per
    // caller on a loaded machine outlasted Schemathesis' 10 s to load a schema.
    join(root, "api/openapi.json"),
    "--url",
    opts.apiUrl,
    "--header",
    `Authorization: Bearer ${opts.token}`,
    "--checks",
    "all",
    "--phases",
    opts.phases,
    "--max-examples",
    String(opts.examples ?? FUZZ_EXAMPLES),
    "--seed",
    FUZZ_SEED,
    "--workers",
    "2",
    "--no-shrink",
    "--suppress-health-check",
    "all",
    "--request-timeout",
    "15",
    "--report",
    "junit,wfc",
    "--report-junit-path",
    join(reportDir, "junit.xml"),
    "--report-wfc-path",
    join(reportDir, "wfc.json"),
    "--output-truncate",
    "false",
    "--no-color",
    ...(opts.maxSeconds ? ["--max-time", String(opts.maxSeconds)] : []),
  ];
  const child = spawn(opts.command, args, {
    cwd: opts.dir,
    env: { ...process.env, NO_COLOR: "1", SCHEMATHESIS_HOOKS: join(root, "api/fuzz/hooks.py") },
  });
  running.add(child);
  child.on("exit", () => running.delete(child));
  let output = "";
  child.stdout.on("data", (b) => {
    output += b;
  });
  child.stderr.on("data", (b) => {
    output += b;
  });
  await new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const logDir = process.env.FUZZ_LOG_DIR;
  if (logDir) writeFileSync(join(logDir, `fuzz-${opts.as}.log`), output);
  let junit: string;
  let wfc: string;
  try {
    junit = readFileSync(join(reportDir, "junit.xml"), "utf8");
    wfc = readFileSync(join(reportDir, "wfc.json"), "utf8");
  } catch {
    throw new Error(`Schemathesis wrote no report:\n${output.slice(-4000)}`);
  }
  if (logDir) writeFileSync(join(logDir, `fuzz-${opts.as}.xml`), junit);
  const failures: Failure[] = [];
  const xmlText = (x: string) =>
    x
      .replaceAll("&lt;", "<")
      .replaceAll("&gt;", ">")
      .replaceAll("&quot;", '"')
      .replaceAll("&apos;", "'")
      .replaceAll("&amp;", "&");
  // A passing case is a self-closing <testcase …/>: it must not swallow the next one's failures.
  for (const m of junit.matchAll(/<testcase name="([^"]+)"[^>]*?(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    for (const f of (m[2] ?? "").matchAll(/<(failure|error)[^>]*message="([^"]*)"[^>]*>([\s\S]*?)<\/\1>/g)) {
      // One <failure> may hold several numbered cases, each with its own check.
      const text = xmlText(f[3] ?? "");
      const cases = text.split(/\n(?=\d+\. Test Case ID)/);
      for (const c of cases) {
        const check = f[1] === "error" ? "error" : (/- (ST\d+)/.exec(c)?.[1] ?? xmlText(f[2] ?? ""));
        failures.push({ operation: xmlText(m[1] ?? ""), check, detail: c.slice(0, 4000) });
      }
    }
  }
  const report = JSON.parse(wfc).problemDetails.rest as {
    evaluatedHttpCalls: number;
    coveredHttpStatus: { endpointId: string; httpStatus: (number | null)[] }[];
  };
  const links = /API Links:\s*(\d+ covered \/ \d+ selected \/ \d+ total)/.exec(output)?.[1];
  return {
    failures,
    output,
    operations: [...junit.matchAll(/<testcase /g)].length,
    requests: report.evaluatedHttpCalls,
    statuses: new Map(report.coveredHttpStatus.map((c) => [c.endpointId, c.httpStatus])),
    ...(links ? { links } : {}),
  };
}

/** Operations that answered 2xx at least once: what a run reached past its refusals. */
export function succeeded(run: FuzzRun): string[] {
  return [...run.statuses]
    .filter(([, s]) => s.some((x) => x !== null && x >= 200 && x < 300))
    .map(([op]) => op)
    .toSorted();
}
