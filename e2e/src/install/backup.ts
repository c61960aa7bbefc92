// biome-ignore-all lint/suspicious/noExplicitAny: the apiserver's JSON as it comes
// Back up and restore a control plane whose database is `database.inCluster` (docs/deploy.md, "Back up"):
// what kubectl alone can do, so a platform team can run the same steps by hand.
//
// A backup is a folder of three files:
// - `berth.dump`: pg_dump's custom format, taken inside the Postgres pod (pods/exec). The per-table row
//   counts and content hashes (`rows.tsv`) come from the same exported snapshot as the dump, so a restore
//   can be checked against them to the row.
// - `resources.json`: the management cluster's berth.dev objects (spec and status) and their namespaces.
//   Status matters: a Session restored without its assigned cluster would be placed again.
// - `secrets.json`: the Secrets the control plane reads (its chart's, the operator-token signing key, the
//   GPU clusters' credentials). Without the signing key a fresh control plane makes a new one and refuses
//   every operator's token; without the webhook key the sealed webhook secrets cannot be opened.
//
// A restore goes in this order: Secrets, berth.dev objects, Postgres alone, the dump, then the rest of the
// control plane. The API and the worker start only once the data is back: an API started on an empty
// database would migrate it and make a new administrator, and a worker started without the Sessions could
// delete their GPU clusters' mirrors. The dump is restored only into a database with no tables: a restore
// over live data is refused in one line (RestoreError), never cleaned first.
import { execFile, spawn } from "node:child_process";
import { createReadStream, createWriteStream, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import { POSTGRES_MAJOR } from "@berth/cdk8s/image/postgres";
import { API_VERSION } from "@berth/crds";
import { parseAllDocuments } from "yaml";
import type { KubeHttp } from "../testbed/kube.ts";

const run = promisify(execFile);
const BIN = `/usr/lib/postgresql/${POSTGRES_MAJOR}/bin`;
export const POSTGRES_POD = "berth-postgres-0";
/** The StatefulSet's claim (volumeClaimTemplates `storage`, cdk8s/src/pod.ts). */
export const POSTGRES_CLAIM = "storage-berth-postgres-0";
const GROUP = `/apis/${API_VERSION}`;
/** The management cluster's kinds (plural); SessionMirror and ImageBuild live on GPU clusters. */
const MANAGEMENT_KINDS = [
  "offerings",
  "images",
  "resourcepresets",
  "resourcepolicies",
  "clusters",
  "pools",
  "wallets",
  "volumes",
  "sessions",
];
/** The operator-token signing key (api/src/domain/clusters/signingKey.ts). */
const SIGNING_KEY_SECRET = "berth-internal-signing-key";

/** A restore asked of a database that already holds data: one line, nothing changed. */
export class RestoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RestoreError";
  }
}

export interface Target {
  kubeconfig: string;
  /** The control plane's namespace; default berth-system. */
  namespace?: string;
}

/** Per table: its row count and the md5 of its rows as text, sorted. */
export type TableRows = Record<string, { rows: number; md5: string }>;

export interface Backup {
  dir: string;
  dumpBytes: number;
  rows: TableRows;
  resources: number;
  secrets: string[];
  seconds: number;
}

const kubectl = (t: Target, args: string[]) =>
  run("kubectl", ["--kubeconfig", t.kubeconfig, ...args], { maxBuffer: 2 ** 26 }).then((r) => r.stdout);

/** `kubectl exec` into the Postgres pod, stdin from `input` and stdout to `output` when given. */
function execPostgres(
  t: Target,
  script: string,
  io: { input?: string; output?: string; timeoutMs?: number } = {},
): Promise<{ stdout: string; stderr: string }> {
  const ns = t.namespace ?? "berth-system";
  const child = spawn(
    "kubectl",
    [
      "--kubeconfig",
      t.kubeconfig,
      "-n",
      ns,
      "exec",
      ...(io.input ? ["-i"] : []),
      POSTGRES_POD,
      "-c",
      "postgres",
      "--",
      "sh",
      "-c",
      script,
    ],
    { stdio: ["pipe", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (c) => {
    stderr += c;
  });
  const out = io.output
    ? pipeline(child.stdout, createWriteStream(io.output))
    : new Promise<void>((resolve) => {
        child.stdout.on("data", (c) => {
          stdout += c;
        });
        child.stdout.on("end", resolve);
      });
  // A refusal closes stdin early: the write's EPIPE is not the error, the script's line is.
  const inp = io.input ? pipeline(createReadStream(io.input), child.stdin).catch(() => {}) : child.stdin.end();
  const deadline = setTimeout(() => child.kill(), io.timeoutMs ?? 600_000);
  const code = new Promise<number>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (c) => {
      clearTimeout(deadline);
      resolve(c ?? 1);
    });
  });
  return Promise.all([out, inp, code]).then(([, , c]) => {
    // kubectl adds "command terminated with exit code N": the script's own last line says why.
    const why = stderr
      .trim()
      .split("\n")
      .filter((l) => !l.startsWith("command terminated with exit code"))
      .at(-1);
    if (c !== 0) throw new Error(why || `kubectl exec exited ${c}`);
    return { stdout, stderr };
  });
}

const PSQL = `${BIN}/psql -h /tmp -U postgres -d berth -XAtq -v ON_ERROR_STOP=1`;
/** One `rows <table> <count> <md5>` line per table of the public schema. */
const ROWS_SQL = `SELECT format('rows %s %s %s', c.relname, (xpath('/row/n/text()', x))[1]::text, (xpath('/row/h/text()', x))[1]::text)
  FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace,
  LATERAL query_to_xml(format('SELECT count(*) AS n, md5(coalesce(string_agg(t::text, chr(10) ORDER BY t::text), '''')) AS h FROM public.%I t', c.relname), false, true, '') x
  WHERE s.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY c.relname;`;

function parseRows(text: string): TableRows {
  const rows: TableRows = {};
  for (const line of text.split("\n")) {
    const m = /^rows (\S+) (\d+) ([0-9a-f]{32})$/.exec(line.trim());
    if (m) rows[m[1] as string] = { rows: Number(m[2]), md5: m[3] as string };
  }
  return rows;
}

/** The database's tables as rows.tsv states them, read now (no snapshot). */
export async function countRows(t: Target): Promise<TableRows> {
  return parseRows((await execPostgres(t, `${PSQL} -c ${shellQuote(ROWS_SQL)}`)).stdout);
}

/** One SQL statement's rows, tab-separated, in the Postgres pod. */
export async function query(t: Target, sql: string): Promise<string[][]> {
  const { stdout } = await execPostgres(t, `${PSQL} -F '\t' -c ${shellQuote(sql)}`);
  return stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => l.split("\t"));
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The dump and the row counts in one exported snapshot: a psql session holds a repeatable-read
 * transaction open (its stdin a FIFO) while pg_dump reads with --snapshot.
 */
const DUMP_SCRIPT = `set -eu
d=$(mktemp -d /tmp/berth-backup.XXXXXX)
trap 'rm -rf "$d"' EXIT
mkfifo "$d/in"
${PSQL} <"$d/in" >"$d/out" 2>"$d/err" &
exec 3>"$d/in"
# \\copy closes its file when done (psql's own output may sit in its buffer).
printf '%s\\n' "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY;" "\\copy (SELECT pg_export_snapshot()) TO '$d/snapshot'" >&3
i=0
until [ -s "$d/snapshot" ]; do
  i=$((i + 1)); [ "$i" -le 600 ] || { echo "no snapshot in 60 s: $(cat "$d/err")" >&2; exit 1; }
  sleep 0.1
done
${BIN}/pg_dump -h /tmp -U postgres -d berth --format=custom --snapshot="$(cat "$d/snapshot")" --file="$d/dump"
printf '%s\\nCOMMIT;\\n' ${shellQuote(ROWS_SQL)} >&3
exec 3>&-
wait
grep '^rows ' "$d/out" >&2
cat "$d/dump"
`;

/** Back up the control plane into `dir` (made if absent). */
export async function backUp(
  t: Target,
  dir: string,
  o: { controlPlaneSecrets: string[]; kube: KubeHttp },
): Promise<Backup> {
  const started = performance.now();
  const ns = t.namespace ?? "berth-system";
  mkdirSync(dir, { recursive: true });
  const dump = join(dir, "berth.dump");
  const { stderr } = await execPostgres(t, DUMP_SCRIPT, { output: dump });
  const rows = parseRows(stderr);
  if (Object.keys(rows).length === 0) throw new Error(`the dump's row counts are missing: ${stderr.slice(0, 500)}`);
  writeFileSync(
    join(dir, "rows.tsv"),
    Object.entries(rows)
      .map(([k, v]) => `${k}\t${v.rows}\t${v.md5}\n`)
      .join(""),
  );

  const objects: any[] = [];
  for (const plural of MANAGEMENT_KINDS) {
    const list = await o.kube.json<any>("GET", `${GROUP}/${plural}`);
    for (const x of list.items) objects.push({ plural, object: strip(x) });
  }
  const namespaces = [...new Set(objects.map((x) => x.object.metadata.namespace).filter(Boolean))];
  const nsObjects = [];
  for (const n of namespaces) nsObjects.push(strip(await o.kube.json<any>("GET", `/api/v1/namespaces/${n}`)));
  writeFileSync(join(dir, "resources.json"), `${JSON.stringify({ namespaces: nsObjects, objects }, null, 1)}\n`);

  const names = new Set([...o.controlPlaneSecrets, SIGNING_KEY_SECRET]);
  for (const x of objects)
    if (x.plural === "clusters" && x.object.spec.credentialSecretRef?.namespace === ns)
      names.add(x.object.spec.credentialSecretRef.name);
  const secrets: any[] = [];
  for (const name of names) {
    const got = await o.kube.raw("GET", `/api/v1/namespaces/${ns}/secrets/${name}`);
    if (got.status === 200) secrets.push(strip(JSON.parse(got.text)));
  }
  writeFileSync(join(dir, "secrets.json"), `${JSON.stringify(secrets, null, 1)}\n`, { mode: 0o600 });
  return {
    dir,
    dumpBytes: statSync(dump).size,
    rows,
    resources: objects.length,
    secrets: secrets.map((s) => s.metadata.name),
    seconds: (performance.now() - started) / 1000,
  };
}

/** What a new object may carry over from a stored one. */
function strip(x: any): any {
  const { metadata: m, ...rest } = x;
  const metadata: any = { name: m.name };
  if (m.namespace) metadata.namespace = m.namespace;
  if (m.labels) metadata.labels = m.labels;
  if (m.annotations) {
    const { "kubectl.kubernetes.io/last-applied-configuration": _, ...a } = m.annotations;
    if (Object.keys(a).length) metadata.annotations = a;
  }
  if (m.finalizers) metadata.finalizers = m.finalizers;
  return { ...rest, metadata };
}

/** The control-plane manifest's objects but its Namespace (on the bed, the GPU cluster's pods share it). */
function withoutNamespaces(file: string, into: string): string {
  const docs = parseAllDocuments(readFileSync(file, "utf8"))
    .map((d) => d.toJS())
    .filter((o) => o && o.kind !== "Namespace");
  const out = join(into, "control-plane-objects.json");
  writeFileSync(out, JSON.stringify({ apiVersion: "v1", kind: "List", items: docs }));
  return out;
}

/**
 * Remove the control plane: its pods and objects, its Postgres claim (the data with it), its Secrets and
 * the management cluster's berth.dev objects. The GPU clusters, and the CRDs, stay.
 */
export async function destroyControlPlane(
  t: Target,
  o: { controlPlaneFile: string; workDir: string; secrets: string[]; kube: KubeHttp },
): Promise<void> {
  const ns = t.namespace ?? "berth-system";
  await kubectl(t, [
    "delete",
    "--ignore-not-found",
    "--wait",
    "--timeout=180s",
    "-f",
    withoutNamespaces(o.controlPlaneFile, o.workDir),
  ]);
  await kubectl(t, ["-n", ns, "delete", "pvc", POSTGRES_CLAIM, "--ignore-not-found", "--wait", "--timeout=120s"]);
  for (const plural of MANAGEMENT_KINDS)
    await kubectl(t, ["delete", `${plural}.berth.dev`, "--all", "--all-namespaces", "--wait", "--timeout=120s"]);
  if (o.secrets.length) await kubectl(t, ["-n", ns, "delete", "secret", "--ignore-not-found", ...o.secrets]);
}

export interface Restored {
  rows: TableRows;
  /** From the first Secret written to the API and the worker Ready. */
  seconds: number;
}

/**
 * Restore `dir` into a control plane that has none: Secrets, berth.dev objects, Postgres alone, the dump
 * (refused when the database has tables), then the whole control-plane manifest. Returns once the
 * restored tables are counted; the caller waits for the API.
 */
export async function restore(
  t: Target,
  dir: string,
  o: { controlPlaneFile: string; kube: KubeHttp; timeoutMs?: number },
): Promise<Restored> {
  const started = performance.now();
  const ns = t.namespace ?? "berth-system";
  const timeout = `${Math.round((o.timeoutMs ?? 300_000) / 1000)}s`;
  // A management cluster made anew has no control-plane namespace yet; its manifest labels it later.
  await createIfAbsent(o.kube, "/api/v1/namespaces", { metadata: { name: ns } });
  for (const s of JSON.parse(readFileSync(join(dir, "secrets.json"), "utf8")))
    await createIfAbsent(o.kube, `/api/v1/namespaces/${ns}/secrets`, s);
  const { namespaces, objects } = JSON.parse(readFileSync(join(dir, "resources.json"), "utf8"));
  for (const n of namespaces) await createIfAbsent(o.kube, "/api/v1/namespaces", n);
  for (const { plural, object } of objects) {
    const base = object.metadata.namespace
      ? `${GROUP}/namespaces/${object.metadata.namespace}/${plural}`
      : `${GROUP}/${plural}`;
    const made = await createIfAbsent(o.kube, base, object);
    // Status is a subresource: written after the create, on the object the create made.
    if (made && object.status)
      await o.kube.json("PUT", `${base}/${object.metadata.name}/status`, { ...made, status: object.status });
  }
  await kubectl(t, [
    "apply",
    "--server-side",
    "--force-conflicts",
    "--field-manager=berth-control-plane",
    "-l",
    "app.kubernetes.io/name=berth-postgres",
    "-f",
    o.controlPlaneFile,
  ]);
  await kubectl(t, ["-n", ns, "rollout", "status", "statefulset/berth-postgres", `--timeout=${timeout}`]);
  await restoreDump(t, join(dir, "berth.dump"));
  const rows = await countRows(t);
  await kubectl(t, [
    "apply",
    "--server-side",
    "--force-conflicts",
    "--field-manager=berth-control-plane",
    "-f",
    o.controlPlaneFile,
  ]);
  for (const d of ["deployment/berth-api", "deployment/berth-worker"])
    await kubectl(t, ["-n", ns, "rollout", "status", d, `--timeout=${timeout}`]);
  return { rows, seconds: (performance.now() - started) / 1000 };
}

/**
 * The GPU cluster's side of a restore (docs/deploy.md): the operator restarted meters every pod again from
 * its start, so usage acknowledged after the dump comes back, and what the dump holds is dropped as sent.
 */
export async function restartOperator(t: Target, timeout = "300s"): Promise<void> {
  const ns = t.namespace ?? "berth-system";
  await kubectl(t, ["-n", ns, "rollout", "restart", "deployment/berth-operator"]);
  await kubectl(t, ["-n", ns, "rollout", "status", "deployment/berth-operator", `--timeout=${timeout}`]);
}

/** pg_restore of the dump in one transaction, only into a database with no tables of its own. */
export async function restoreDump(t: Target, dump: string): Promise<void> {
  // The dump is read whole first: a script that ends before its stdin does (a refusal, or pg_restore
  // stopping at the archive's last entry) leaves kubectl exec waiting on it for ever (seen with -i).
  const script = `set -eu
d=$(mktemp -d /tmp/berth-restore.XXXXXX)
trap 'rm -rf "$d"' EXIT
cat > "$d/dump"
n=$(${PSQL} -c "SELECT count(*) FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = 'public' AND c.relkind IN ('r', 'p')")
if [ "$n" != 0 ]; then
  echo "restore refused: the database berth already has $n tables; restore only into a fresh install's empty database, before the API starts (docs/deploy.md)" >&2
  exit 3
fi
${BIN}/pg_restore -h /tmp -U postgres -d berth --exit-on-error --single-transaction "$d/dump"
`;
  try {
    await execPostgres(t, script, { input: dump });
  } catch (e) {
    const line = (e as Error).message;
    if (line.startsWith("restore refused:")) throw new RestoreError(line);
    throw e;
  }
}

async function createIfAbsent(kube: KubeHttp, collection: string, body: any): Promise<any | undefined> {
  const { status: _, ...spec } = body;
  const res = await kube.raw("POST", collection, spec);
  if (res.status === 409) return undefined;
  if (res.status >= 300) throw new Error(`creating ${collection}/${body.metadata.name}: ${res.status} ${res.text}`);
  return JSON.parse(res.text);
}

/** Tables whose count or content differ. */
export function differences(a: TableRows, b: TableRows): string[] {
  const out: string[] = [];
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const x = a[k];
    const y = b[k];
    if (!x || !y || x.rows !== y.rows || x.md5 !== y.md5)
      out.push(`${k}: ${x ? `${x.rows} rows` : "absent"} / ${y ? `${y.rows} rows` : "absent"}`);
  }
  return out;
}
