// Stateful fuzzing: Schemathesis follows the document's links (generated from the routes by
// api/src/http/openapi.ts: each create links to what reads, acts on and deletes the thing it made), so a
// run creates a session, a volume, a webhook, an image, a credit request… and goes on with what it got
// back, instead of guessing ids. Against the sessions bed (@berth/e2e/sessions): the real API over HTTP
// on real Postgres, a management cluster and a GPU cluster of kwok nodes with its operator and the
// leader-elected worker, so a created session is placed and runs. Three callers, each with their own
// token: the super_admin, an organization admin and a member. No 5xx (503 included: every group is
// configured), every status documented, every body (4xx envelopes too) as its schema says. The seed is
// printed and named by a failure: FUZZ_SEED=<it> replays the run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LocalRegistry, startRegistry } from "@berth/e2e";
import { type RunningMetricsServer, startMetricsServer } from "@berth/e2e/metrics-server";
import { gpuCluster, H100, MANAGEMENT, type SessionsBed, startSessionsBed } from "@berth/e2e/sessions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ensureSchemathesis,
  FUZZ_SEED,
  forgiven,
  runSchemathesis,
  stopSchemathesis,
  succeeded,
} from "./schemathesis.test-support.ts";

// Scenarios per caller (each up to max-steps calls along the links, api/fuzz/schemathesis.toml), and a
// bound on each caller's run so CI's budget holds on a loaded machine (it reports what it ran by then).
const STATEFUL_EXAMPLES = Number(process.env.FUZZ_STATEFUL_EXAMPLES ?? 20);
const STATEFUL_SECONDS = Number(process.env.FUZZ_STATEFUL_SECONDS ?? 240);

let bed: SessionsBed;
let registry: LocalRegistry;
let metrics: RunningMetricsServer;
let dir: string;
let schemathesis: string;

beforeAll(async () => {
  schemathesis = ensureSchemathesis();
  dir = mkdtempSync(join(tmpdir(), "berth-stateful-fuzz-"));
  registry = await startRegistry({ name: "berth", dir: join(dir, "registry") });
  metrics = await startMetricsServer({ dir: join(dir, "metrics") });
  bed = await startSessionsBed({
    fleet: { clusters: [MANAGEMENT, gpuCluster("gpu-a", [{ name: "gpu-a-1", gpuModel: H100, gpuCount: 4 }])] },
    apiEnv: { BERTH_REGISTRY_URL: registry.url, BERTH_METRICS_SERVER_URL: metrics.url },
  });
}, 300_000);

afterAll(async () => {
  stopSchemathesis();
  await bed?.stop();
  await registry?.stop();
  await metrics?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A fresh token by signing in, as the caller would: a long run outlives the bed's first tokens. */
async function signIn(user: { email: string; password: string }): Promise<string> {
  const r = await bed.t.request("POST", "/api/v1/auth/login", { json: { email: user.email, password: user.password } });
  if (r.status !== 200) throw new Error(`signing in ${user.email}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.access_token;
}

describe("the OpenAPI document's links, followed", () => {
  const callers = ["super_admin", "org_admin", "member"] as const;
  for (const as of callers) {
    it.concurrent(`create, then read, act and delete hold as a ${as}`, { timeout: 1_200_000 }, async () => {
      const user = { super_admin: bed.superAdmin, org_admin: bed.orgAdmin, member: bed.alice }[as];
      const started = performance.now();
      const r = await runSchemathesis({
        command: schemathesis,
        apiUrl: bed.t.api.url,
        token: await signIn(user),
        as: `stateful-${as}`,
        phases: "stateful",
        dir,
        examples: STATEFUL_EXAMPLES,
        maxSeconds: STATEFUL_SECONDS,
      });
      const kept = r.failures.filter((f) => !forgiven(f));
      const reached = succeeded(r);
      console.log(
        `stateful fuzz as ${as} (seed ${FUZZ_SEED}; replay with FUZZ_SEED=${FUZZ_SEED}): ${r.requests} requests, ` +
          `links ${r.links ?? "?"}, ${r.statuses.size} operations called, ${reached.length} answered 2xx, ` +
          `${STATEFUL_EXAMPLES} scenarios, ${((performance.now() - started) / 1000).toFixed(0)} s; ` +
          `${r.failures.length - kept.length} refusals of rules JSON Schema cannot state, ${kept.length} failures\n` +
          `  answered 2xx: ${reached.join(", ")}\n${r.output.split("\n").slice(-25).join("\n")}`,
      );
      expect(r.requests, r.output.slice(-2000)).toBeGreaterThan(0);
      // The super_admin's random creates are accepted often enough (an organization, a project, a user)
      // that its sequences go past their first step; a member's and an organization admin's mostly
      // name things they may not use, and are answered 4xx in the envelope.
      if (as === "super_admin") expect(Number(/^(\d+) covered/.exec(r.links ?? "")?.[1] ?? 0)).toBeGreaterThan(0);
      expect(
        kept.map((f) => `${f.operation}: ${f.check}\n${f.detail}`),
        `Schemathesis seed ${FUZZ_SEED}: replay with FUZZ_SEED=${FUZZ_SEED}`,
      ).toEqual([]);
    });
  }
});
