// /api/v1/monitoring against a real metrics server (VictoriaMetrics on loopback) fed by stand-in GPU
// exporters through the relay the operators' forwards reach (domain/monitoring/relay.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunningGpuExporter, startGpuExporter } from "@berth/e2e/gpu-exporter";
import { type RunningMetricsServer, startMetricsServer } from "@berth/e2e/metrics-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertSession } from "../../db/operations/sessions/insertSession.ts";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  itBehavesPerRole,
  startIdentityTestApi,
} from "../../domain/identity/identity.test-support.ts";

const CLUSTER = "clu_mon1";
const OTHER_CLUSTER = "clu_mon2";
const CLUSTER_NAME = "gpu-mon";
const cards = [
  { uuid: "GPU-aaaa-0001", node: "gpu-a", model: "NVIDIA-H100-80GB-HBM3", memoryMiB: 81_559 },
  { uuid: "GPU-aaaa-0002", node: "gpu-a", model: "NVIDIA-H100-80GB-HBM3", memoryMiB: 81_559 },
  { uuid: "GPU-aaaa-0003", node: "gpu-a", model: "NVIDIA-H100-80GB-HBM3", memoryMiB: 81_559 },
];

let dir: string;
let vm: RunningMetricsServer;
let exporter: RunningGpuExporter;
let t: IdentityTestApi;
let w: IdentityWorld;
/** memberA's session (org A, project A), adminB's org's session (memberB), and an unheld card. */
let sesA: string;
let sesB: string;

async function aSession(owner: string, org: string, project: string | null, tag: string): Promise<string> {
  const id = `ses_mon${tag}${Date.now().toString(36)}`;
  await insertSession(t.deps.db, {
    id,
    cr_name: id.replace("_", "-"),
    namespace: "org",
    owner_id: owner,
    organization_id: org,
    project_id: project,
    display_name: null,
    offering: "h100",
    preset: "gpu-small",
    image: "jupyterlab",
    gpu_model: "NVIDIA-H100-80GB-HBM3",
    gpu_count: 1,
    hourly_credit_rate: "4000000",
    cluster_pin: null,
    priority: 0,
    created_at: new Date(),
  });
  await t.deps.db("sessions").where({ id }).update({ cluster_id: CLUSTER, phase: "Running" });
  return id;
}

/** One scrape of the exporter forwarded as an operator does (job gpu-exporter), then flushed. */
async function forwardOnce(cluster = CLUSTER): Promise<void> {
  const since = Date.now();
  const text = await (await fetch(exporter.url)).text();
  await t.deps.monitoring.forward(cluster, [{ job: "gpu-exporter", text }]);
  await vm.seen(`DCGM_FI_DEV_GPU_UTIL{berth_cluster="${cluster}"}`, since);
}

/** The test API's clock is the test's: named ranges end at wall time here, where the samples are. */
const panel = (id: string, q: Record<string, string>, token: string) => {
  t.clock.advance((Date.now() - t.clock.now().getTime()) / 1000);
  return t.request("GET", `/api/v1/monitoring/panels/${id}?${new URLSearchParams(q)}`, { token });
};

const labelsOf = (body: { series: { labels: Record<string, string> }[] }) => body.series.map((s) => s.labels);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "berth-monitoring-"));
  vm = await startMetricsServer({ dir });
  exporter = await startGpuExporter({ cards });
  t = await startIdentityTestApi({ env: { BERTH_METRICS_SERVER_URL: vm.url } });
  w = await anIdentityWorld(t);
  // The cluster as registration writes it: its series are stamped with the id, its legend shows the name.
  await t.deps.db("clusters").insert({
    id: CLUSTER,
    name: CLUSTER_NAME,
    session_domain: "mon.example",
    registered_by: null,
    registered_at: new Date(),
  });
  sesA = await aSession(w.memberA.id, w.orgA.id, w.projectA.id, "a");
  sesB = await aSession(w.memberB.id, w.orgB.id, w.projectB.id, "b");
  exporter.setContainer(
    { pod: sesA.replace("_", "-"), namespace: "berth-sessions", container: "lab", uuid: cards[0]?.uuid as string },
    { util: 40, memUsedMiB: 1000 },
  );
  exporter.setContainer(
    { pod: sesB.replace("_", "-"), namespace: "berth-sessions", container: "lab", uuid: cards[1]?.uuid as string },
    { util: 70, memUsedMiB: 2000 },
  );
  exporter.setCard(cards[0]?.uuid as string, { util: 40, memUsedMiB: 1000 });
  exporter.setCard(cards[1]?.uuid as string, { util: 70, memUsedMiB: 2000 });
  exporter.setCard(cards[2]?.uuid as string, { util: 5 });
  await forwardOnce();
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await exporter?.stop();
  await vm?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("monitoring panels", () => {
  it("lists the catalogue with a scope per panel", async () => {
    const r = await t.request("GET", "/api/v1/monitoring/panels", { token: w.memberA.token });
    expect(r.status).toBe(200);
    const scopes = new Set(r.body.data.map((p: { scope: string }) => p.scope));
    expect([...scopes].sort()).toEqual(["card", "cluster", "fleet", "node", "session"]);
  });

  it("gives a member only their own session's series, even on a fleet panel or another cluster's node", async () => {
    const fleet = await panel(
      "node.gpu_utilization",
      { cluster: CLUSTER, node: "gpu-a", range: "15m" },
      w.memberA.token,
    );
    expect(fleet.status).toBe(200);
    expect(labelsOf(fleet.body).map((l) => l.card)).toEqual([cards[0]?.uuid]);
    const widened = await panel("fleet.gpu_utilization", { range: "15m" }, w.memberA.token);
    expect(widened.status).toBe(200);
    // The mean over the member's own card only: 40, never the fleet's (40 + 70 + 5) / 3.
    const last = widened.body.series[0].values.filter((v: number | null) => v !== null).at(-1);
    expect(last).toBe(40);
    // A raw query is not theirs to send.
    const raw = await t.request("POST", "/api/v1/monitoring/query", {
      token: w.memberA.token,
      json: { query: "DCGM_FI_DEV_GPU_UTIL", range: "15m" },
    });
    expect(raw.status).toBe(403);
    expect(raw.body.error.code).toBe("forbidden");
  });

  it("refuses a session panel of someone else's session with 404 and answers the owner's", async () => {
    const other = await panel("session.gpu_utilization", { session: sesB, range: "15m" }, w.memberA.token);
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe("not_found");
    const own = await panel("session.gpu_utilization", { session: sesA, range: "15m" }, w.memberA.token);
    expect(own.status).toBe(200);
    expect(own.body.series.map((s: { label: string }) => s.label)).toEqual([cards[0]?.uuid]);
  });

  it("gives an organization admin their organization's series and a super_admin every card", async () => {
    const a = await panel("node.gpu_utilization", { cluster: CLUSTER, node: "gpu-a", range: "15m" }, w.adminB.token);
    expect(labelsOf(a.body).map((l) => l.card)).toEqual([cards[1]?.uuid]);
    const all = await panel(
      "node.gpu_utilization",
      { cluster: CLUSTER, node: "gpu-a", range: "15m" },
      w.superAdmin.token,
    );
    expect(labelsOf(all.body).map((l) => l.card)).toEqual(cards.map((c) => c.uuid));
    // A raw query of an org admin is narrowed the same way: no label it writes widens it.
    const raw = await t.request("POST", "/api/v1/monitoring/query", {
      token: w.adminB.token,
      json: { query: 'max by (UUID) (DCGM_FI_DEV_GPU_UTIL{berth_org!="x"})', range: "15m" },
    });
    expect(raw.status).toBe(200);
    expect(raw.body.series.map((s: { labels: { UUID: string } }) => s.labels.UUID)).toEqual([cards[1]?.uuid]);
  });

  it("stamps the cluster from the forward itself: a text claiming another cluster or session is overridden", async () => {
    const forged = `DCGM_FI_DEV_GPU_UTIL{UUID="GPU-forged",Hostname="gpu-z",berth_cluster="${OTHER_CLUSTER}",berth_owner="${w.memberA.id}",berth_org="${w.orgA.id}"} 99\n`;
    const since = Date.now();
    await t.deps.monitoring.forward(CLUSTER, [{ job: "gpu-exporter", text: forged }]);
    await vm.seen('DCGM_FI_DEV_GPU_UTIL{UUID="GPU-forged"}', since);
    const mine = await panel("fleet.gpu_utilization", { range: "15m" }, w.memberA.token);
    // Named as people know the cluster; its id stays among the labels.
    expect(mine.body.series.map((s: { label: string }) => s.label)).toEqual([CLUSTER_NAME]);
    expect(mine.body.series[0].labels).toMatchObject({ berth_cluster: CLUSTER, berth_cluster_name: CLUSTER_NAME });
    expect(mine.body.series[0].values.filter((v: number | null) => v !== null).at(-1)).toBe(40);
    const all = await panel("fleet.gpu_utilization", { range: "15m" }, w.superAdmin.token);
    expect(all.body.series.map((s: { label: string }) => s.label)).toEqual([CLUSTER_NAME]);
  });

  it("bounds the step so a 30-day range never asks for more points than the server allows", async () => {
    const r = await panel("session.gpu_utilization", { session: sesA, range: "30d" }, w.memberA.token);
    expect(r.status).toBe(200);
    expect(r.body.range.step_seconds).toBe(3600);
    expect(r.body.timestamps.length).toBeLessThanOrEqual(r.body.range.max_points);
    for (const s of r.body.series) expect(s.values.length).toBe(r.body.timestamps.length);
  });

  it("follows the values the test drives on a session's utilisation chart", async () => {
    let lastEnd = 0;
    for (const util of [10, 90]) {
      exporter.setCard(cards[0]?.uuid as string, { util });
      exporter.setContainer(
        { pod: sesA.replace("_", "-"), namespace: "berth-sessions", container: "lab", uuid: cards[0]?.uuid as string },
        { util, memUsedMiB: 1000 },
      );
      // A range ending in a later second than the last one asked (answers are cached per range for ten
      // seconds, and a range's end is counted in whole seconds).
      while (Math.floor(Date.now() / 1000) <= lastEnd) await new Promise((r) => setTimeout(r, 20));
      await forwardOnce();
      const r = await panel(
        "session.gpu_utilization",
        { session: sesA, from: new Date(Date.now() - 300_000).toISOString(), to: new Date().toISOString() },
        w.memberA.token,
      );
      expect(r.status).toBe(200);
      expect(r.body.range.to).toBeGreaterThan(lastEnd);
      lastEnd = r.body.range.to;
      expect(r.body.series[0].values.filter((v: number | null) => v !== null).at(-1)).toBe(util);
    }
  });

  it("refuses bad input with the envelope: unknown panel, missing scope, reversed and too-long ranges", async () => {
    const unknown = await panel("fleet.nothing", {}, w.superAdmin.token);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("not_found");
    const noScope = await panel("node.gpu_utilization", { cluster: CLUSTER }, w.superAdmin.token);
    expect(noScope.status).toBe(400);
    expect(noScope.body.error.details.issues[0].path).toEqual(["query", "node"]);
    const now = Date.now();
    const reversed = await panel(
      "fleet.gpu_utilization",
      { from: new Date(now).toISOString(), to: new Date(now - 3600_000).toISOString() },
      w.superAdmin.token,
    );
    expect(reversed.status).toBe(400);
    expect(reversed.body.error.details.issues[0].code).toBe("range_order");
    const long = await panel(
      "fleet.gpu_utilization",
      { from: new Date(now - 100 * 86_400_000).toISOString(), to: new Date(now).toISOString() },
      w.superAdmin.token,
    );
    expect(long.status).toBe(400);
    expect(long.body.error.details.issues[0].code).toBe("range_too_long");
    const injected = await panel(
      "card.gpu_utilization",
      { cluster: CLUSTER, card: 'x"} or vector(1)' },
      w.superAdmin.token,
    );
    expect(injected.status).toBe(400);
    const badQuery = await t.request("POST", "/api/v1/monitoring/query", {
      token: w.superAdmin.token,
      json: { query: "sum(", range: "15m" },
    });
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.error.code).toBe("validation_failed");
  });
});

/** A gateway replica's status text at `atMs`: its upstream histogram and request counter, as prom-client writes them. */
function gatewayText(o: { atMs: number; fastOk: number; slowOk: number; failed: number; instance?: string }): string {
  const le = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
  const lines: string[] = [];
  // fastOk answers took under 10 ms, slowOk between 100 and 250 ms; failed got no answer (1 s connect wait).
  for (const b of le)
    lines.push(
      `berth_gateway_upstream_duration_seconds_bucket{le="${b}",outcome="2xx"} ${(b >= 0.01 ? o.fastOk : 0) + (b >= 0.25 ? o.slowOk : 0)} ${o.atMs}`,
      `berth_gateway_upstream_duration_seconds_bucket{le="${b}",outcome="failed"} ${b >= 1 ? o.failed : 0} ${o.atMs}`,
    );
  lines.push(
    `berth_gateway_upstream_duration_seconds_bucket{le="+Inf",outcome="2xx"} ${o.fastOk + o.slowOk} ${o.atMs}`,
    `berth_gateway_upstream_duration_seconds_count{outcome="2xx"} ${o.fastOk + o.slowOk} ${o.atMs}`,
    `berth_gateway_upstream_duration_seconds_bucket{le="+Inf",outcome="failed"} ${o.failed} ${o.atMs}`,
    `berth_gateway_upstream_duration_seconds_count{outcome="failed"} ${o.failed} ${o.atMs}`,
    // A replica's own idea of its instance is overridden by the one the operator names.
    `berth_gateway_requests_total{code="2xx",instance="${o.instance ?? "forged"}"} ${o.fastOk + o.slowOk} ${o.atMs}`,
  );
  return `${lines.join("\n")}\n`;
}

describe("the session gateway's panels", () => {
  it("draws p50 and p99 latency, the error rate and requests by replica, merged over the replicas", async () => {
    const now = Date.now();
    const before = now - 45_000;
    const gw = (instance: string, at: number, fast: number, slow: number, failed: number) => ({
      job: "gateway",
      instance,
      text: gatewayText({ atMs: at, fastOk: fast, slowOk: slow, failed }),
    });
    await t.deps.monitoring.forward(CLUSTER, [gw("gw-a", before, 0, 0, 0), gw("gw-b", before, 0, 0, 0)]);
    await t.deps.monitoring.forward(CLUSTER, [gw("gw-a", now, 100, 0, 10), gw("gw-b", now, 0, 100, 0)]);
    await vm.seen(`berth_gateway_requests_total{berth_cluster="${CLUSTER}",instance="gw-b"}`, now);
    const q = { cluster: CLUSTER, range: "15m" };
    const lastOf = (body: { series: { label: string; values: (number | null)[] }[] }) =>
      Object.fromEntries(body.series.map((x) => [x.label, x.values.filter((v) => v !== null).at(-1)]));

    const latency = await panel("cluster.gateway_latency", q, w.superAdmin.token);
    expect(latency.status).toBe(200);
    const l = lastOf(latency.body);
    // 200 answers: half under 10 ms (one replica), half at 100–250 ms (the other); the failed ten are not latency.
    expect(Object.keys(l).sort()).toEqual(["p50", "p99"]);
    expect(l.p50).toBeGreaterThan(5);
    expect(l.p50).toBeLessThanOrEqual(10);
    expect(l.p99).toBeGreaterThan(100);
    expect(l.p99).toBeLessThanOrEqual(250);

    const errors = await panel("cluster.gateway_errors", q, w.superAdmin.token);
    expect(errors.status).toBe(200);
    expect(lastOf(errors.body).errors).toBeCloseTo((100 * 10) / 210, 1);

    const requests = await panel("cluster.gateway_requests", q, w.superAdmin.token);
    expect(requests.status).toBe(200);
    const r = lastOf(requests.body);
    expect(Object.keys(r).sort()).toEqual(["gw-a", "gw-b"]);
    expect(r["gw-a"]).toBeGreaterThan(0);
    expect(r["gw-a"]).toBeCloseTo(r["gw-b"] as number, 5);

    // The gateway's series belong to no session: a member and an organization admin see none of them.
    for (const token of [w.memberA.token, w.adminA.token]) {
      const narrowed = await panel("cluster.gateway_latency", q, token);
      expect(narrowed.status).toBe(200);
      expect(narrowed.body.series).toEqual([]);
    }
  });
});

describe("monitoring per role", () => {
  itBehavesPerRole(
    [
      {
        name: "/api/v1/monitoring/panels/session.gpu_utilization (someone else's session)",
        method: "GET",
        path: () => `/api/v1/monitoring/panels/session.gpu_utilization?session=${sesA}&range=15m`,
        allowed: [
          { as: "memberA", status: 200 },
          { as: "adminA", status: 200 },
          { as: "projectAdminA", status: 200 },
          { as: "superAdmin", status: 200 },
        ],
        refused: [
          { as: "adminB", status: 404, why: "another organization's session" },
          { as: "memberB", status: 404, why: "another organization's session" },
          { as: "orgMemberA", status: 404, why: "a colleague's session" },
          { as: "outsider", status: 404, why: "no membership" },
        ],
      },
      {
        name: "/api/v1/monitoring/query",
        method: "POST",
        path: () => "/api/v1/monitoring/query",
        body: () => ({ query: "DCGM_FI_DEV_GPU_UTIL", range: "15m" }),
        allowed: [
          { as: "superAdmin", status: 200 },
          { as: "adminA", status: 200 },
        ],
        refused: [
          { as: "memberA", status: 403, why: "members use the catalogued panels" },
          { as: "projectAdminA", status: 403, why: "not an organization admin" },
          { as: "outsider", status: 403, why: "no membership" },
        ],
        malformed: { query: 42 },
      },
    ],
    () => ({ t, w }),
  );
});

describe("monitoring with the metrics server stopped", () => {
  it("answers 503 unavailable, never a 500, and the relay refuses the same way", async () => {
    await vm.stop();
    const r = await panel("fleet.gpu_memory_used", { range: "6h" }, w.superAdmin.token);
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe("unavailable");
    await expect(
      t.deps.monitoring.forward(CLUSTER, [{ job: "gpu-exporter", text: "DCGM_FI_DEV_GPU_UTIL 1\n" }]),
    ).rejects.toMatchObject({
      code: "unavailable",
    });
  });
});
