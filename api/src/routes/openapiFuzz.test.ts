// The API fuzzed from its own OpenAPI document: Schemathesis (pinned in api/fuzz/requirements.txt, installed
// by scripts/ensure-fuzzer.sh into the git-ignored .fuzz-venv/) runs every operation the served document
// lists, as a super_admin, an organization admin and a project member, against the real API process (startApi: migrations,
// bootstrap, default catalog) on real Postgres and a real management cluster. A run fails on any 5xx but
// 503, on a status the operation does not document, on a body or header that does not match its schema,
// on schema-valid input refused as malformed and on malformed input accepted. Sequences along the
// document's links (create, then read, act, delete) are openapiStatefulFuzz.test.ts's.
//
// The operations are read from the document at run time, so routes added later are fuzzed too. The number
// of examples per operation is bounded (FUZZ_EXAMPLES, default below) to keep CI within its budget;
// docs/dev/testing.md says how to run it longer and how to replay a failure.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadCrds } from "@berth/crds/manifests";
import { type Fleet, kubeConfigFrom, type LocalRegistry, startFleet, startRegistry } from "@berth/e2e";
import { type RunningMetricsServer, startMetricsServer } from "@berth/e2e/metrics-server";
import { ApiextensionsV1Api, CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "../config.test-support.ts";
import { createTestDatabase, type TestDatabase } from "../db/db.test-support.ts";
import { type RunningApi, startApi } from "../main.ts";
import {
  ensureSchemathesis,
  FUZZ_EXAMPLES,
  FUZZ_SEED,
  forgiven,
  runSchemathesis,
  stopSchemathesis,
} from "./schemathesis.test-support.ts";

const EXAMPLES = FUZZ_EXAMPLES;
const SEED = FUZZ_SEED;

let fleet: Fleet;
let db: TestDatabase;
let api: RunningApi;
let registry: LocalRegistry;
let metrics: RunningMetricsServer;
let dir: string;
let schemathesis: string;
const tokens: Record<string, string> = {};

async function call(method: string, path: string, token?: string, json?: unknown) {
  const res = await fetch(api.url + path, {
    method,
    headers: {
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...(json !== undefined ? { "Content-Type": "application/json" } : {}),
    },
    ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: a few answers read by path
  const body: any = text ? JSON.parse(text) : null;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return body;
}

/** Signs in a new account and replaces its temporary password, as a person would. */
async function signIn(email: string, temporary: string): Promise<string> {
  const first = await call("POST", "/api/v1/auth/login", undefined, { email, password: temporary });
  const changed = await call("POST", "/api/v1/auth/password", first.access_token, {
    current_password: temporary,
    new_password: `${temporary} but longer and mine`,
  });
  return changed.access_token;
}

beforeAll(async () => {
  schemathesis = ensureSchemathesis();

  dir = mkdtempSync(join(tmpdir(), "berth-fuzz-"));
  fleet = await startFleet({ clusters: [{ name: "mgmt", kind: "management" }] });
  const kc = kubeConfigFrom(fleet.cluster("mgmt").kubeconfig);
  const ext = kc.makeApiClient(ApiextensionsV1Api);
  for (const crd of loadCrds()) await ext.createCustomResourceDefinition({ body: crd as never });
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: "berth-system" } } });
  const kubeconfigPath = join(dir, "kubeconfig");
  writeFileSync(kubeconfigPath, fleet.cluster("mgmt").kubeconfig);
  db = await createTestDatabase({ migrate: false });
  // Every group configured, as a real install has it: without its registry or metrics server a route
  // answers 503, which the fuzzer rightly counts as a server error.
  registry = await startRegistry({ name: "berth", dir: join(dir, "registry") });
  metrics = await startMetricsServer({ dir: join(dir, "metrics") });
  api = await startApi({
    config: testConfig({
      DATABASE_URL: db.url,
      BERTH_REGISTRY_URL: registry.url,
      BERTH_METRICS_SERVER_URL: metrics.url,
      BERTH_KUBECONFIG: kubeconfigPath,
      BERTH_BOOTSTRAP_EMAIL: "admin@fuzz.test",
      BERTH_BOOTSTRAP_PASSWORD: "bootstrap fuzz password",
    }),
  });

  const admin = await signIn("admin@fuzz.test", "bootstrap fuzz password");
  const org = await call("POST", "/api/v1/organizations", admin, { name: "Fuzz" });
  const project = await call("POST", "/api/v1/projects", admin, { organization_id: org.id, name: "Fuzz project" });
  const member = await call("POST", "/api/v1/users", admin, {
    email: "member@fuzz.test",
    password: "member temporary password",
    organization_id: org.id,
  });
  await call("POST", `/api/v1/projects/${project.id}/members`, admin, { user_id: member.id, role: "member" });
  const orgAdmin = await call("POST", "/api/v1/users", admin, {
    email: "org-admin@fuzz.test",
    password: "org admin temporary password",
    organization_id: org.id,
  });
  await call("POST", `/api/v1/organizations/${org.id}/members`, admin, { user_id: orgAdmin.id, role: "org_admin" });
  tokens.super_admin = admin;
  tokens.org_admin = await signIn("org-admin@fuzz.test", "org admin temporary password");
  tokens.member = await signIn("member@fuzz.test", "member temporary password");
}, 300_000);

afterAll(async () => {
  stopSchemathesis();
  await api?.stop();
  await registry?.stop();
  await metrics?.stop();
  await db?.drop();
  await fleet?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// The coverage phase (boundary values of every parameter and field) does not depend on who calls: the
// super_admin, whom no refusal stops before the handler's own work, runs it; the organization admin and
// the member run the examples and the random phase, for what a narrower role is answered. All at once.
const CALLERS = [
  { as: "super_admin", phases: "examples,coverage,fuzzing" },
  { as: "org_admin", phases: "examples,fuzzing" },
  { as: "member", phases: "examples,fuzzing" },
];

describe("the OpenAPI document, fuzzed", () => {
  for (const { as, phases } of CALLERS) {
    it.concurrent(`holds for every operation as a ${as}`, { timeout: 1_200_000 }, async () => {
      const started = performance.now();
      const r = await runSchemathesis({
        command: schemathesis,
        apiUrl: api.url,
        token: tokens[as] ?? "",
        as,
        phases,
        dir,
      });
      const kept = r.failures.filter((f) => !forgiven(f));
      console.log(
        `fuzz as ${as} (seed ${SEED}; replay with FUZZ_SEED=${SEED}): ${r.operations} operations, phases ${phases}, ${EXAMPLES} examples each, ` +
          `${r.requests} requests, ${((performance.now() - started) / 1000).toFixed(0)} s; ${r.failures.length - kept.length} refusals of ` +
          `rules JSON Schema cannot state, ${kept.length} failures\n${r.output.split("\n").slice(-25).join("\n")}`,
      );
      expect(r.operations).toBeGreaterThan(50);
      expect(
        kept.map((f) => `${f.operation}: ${f.check}\n${f.detail}`),
        `Schemathesis seed ${SEED}: replay with FUZZ_SEED=${SEED}`,
      ).toEqual([]);
    });
  }
});
