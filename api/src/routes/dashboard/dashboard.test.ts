// GET /api/v1/dashboard over real Postgres: what each role sees, and that it renders with the metrics
// server down (it reads only Berth's own inventory and ledger).
import { createServer } from "node:net";
import type { Pool } from "@berth/crds";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertSession } from "../../db/operations/sessions/insertSession.ts";
import { storageTile } from "../../domain/dashboard/storageTile.ts";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  itBehavesPerRole,
  startIdentityTestApi,
} from "../../domain/identity/identity.test-support.ts";
import type { PoolCapacity } from "../../domain/storage/capacity.ts";

const C1 = "clu_dash1";
const C2 = "clu_dash2";
const H100 = "NVIDIA-H100-80GB-HBM3";
const A100 = "NVIDIA-A100-SXM4-40GB";

let t: IdentityTestApi;
let w: IdentityWorld;
let n = 0;

/** A port nothing listens on: the metrics server is "down" for the whole file. */
async function deadPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function aSession(
  owner: string,
  org: string,
  project: string | null,
  phase: string,
  opts: { cluster?: string; model?: string; gpus?: number; queuedMinutesAgo?: number } = {},
): Promise<string> {
  const id = `ses_dash${(++n).toString().padStart(4, "0")}${Date.now().toString(36)}`;
  await insertSession(t.deps.db, {
    id,
    cr_name: id.replace("_", "-"),
    namespace: "org",
    owner_id: owner,
    organization_id: org,
    project_id: project,
    display_name: `s${n}`,
    offering: "h100",
    preset: "gpu-small",
    image: "jupyterlab",
    gpu_model: opts.model ?? H100,
    gpu_count: opts.gpus ?? 1,
    hourly_credit_rate: "2000000",
    cluster_pin: null,
    priority: 0,
    created_at: new Date(),
  });
  await t.deps
    .db("sessions")
    .where({ id })
    .update({
      phase,
      cluster_id: phase === "Queued" ? null : (opts.cluster ?? C1),
      ...(opts.queuedMinutesAgo ? { queued_at: new Date(Date.now() - opts.queuedMinutesAgo * 60_000) } : {}),
      ...(phase === "Running" ? { started_at: new Date() } : {}),
    });
  return id;
}

async function aSample(session: string, gpuSeconds: number, utilization: number | null): Promise<void> {
  const now = Date.now();
  await t.deps.db("usage_samples").insert({
    cluster_id: C1,
    sample_id: `smp_${session}_${++n}`,
    session,
    period_start: new Date(now - 60_000),
    period_end: new Date(now),
    gpu_seconds: gpuSeconds,
    gpu_utilization: utilization,
  });
}

async function aCharge(session: string, org: string, amount: number): Promise<void> {
  await t.deps.db("ledger_transactions").insert({
    id: `txn_dash${++n}${Date.now().toString(36)}`,
    kind: "charge",
    amount,
    organization_id: org,
    session_id: session,
    cluster_id: C1,
    sample_id: `smp_charge_${n}`,
    actor_kind: "operator",
    created_at: new Date(),
  });
}

async function aNode(
  cluster: string,
  name: string,
  model: string,
  gpus: number,
  inUse: number,
  ready = true,
  schedulable = true,
) {
  await t.deps.db("cluster_nodes").insert({
    cluster_id: cluster,
    name,
    gpu_model: model,
    gpu_count: gpus,
    gpu_allocatable: gpus,
    gpu_in_use: inUse,
    schedulable,
    ready,
    labels: "{}",
    observed_at: new Date(),
  });
}

beforeAll(async () => {
  t = await startIdentityTestApi({ env: { BERTH_METRICS_SERVER_URL: `http://127.0.0.1:${await deadPort()}` } });
  w = await anIdentityWorld(t);
  await t.deps.db("clusters").insert([
    { id: C1, name: "dash-one", session_domain: "one.test" },
    { id: C2, name: "dash-two", session_domain: "two.test" },
  ]);
  await aNode(C1, "h-1", H100, 8, 3);
  await aNode(C1, "h-2", H100, 8, 0, true, false); // cordoned: its GPUs are not free
  await aNode(C2, "a-1", A100, 4, 1, false); // not ready
  const busy = await aSession(w.memberA.id, w.orgA.id, w.projectA.id, "Running");
  const idle = await aSession(w.memberA.id, w.orgA.id, w.projectA.id, "Running", { gpus: 2 });
  await aSession(w.memberA.id, w.orgA.id, w.projectA.id, "Paused");
  await aSession(w.memberB.id, w.orgB.id, w.projectB.id, "Running", { cluster: C2, model: A100 });
  await aSession(w.memberB.id, w.orgB.id, w.projectB.id, "Queued", { queuedMinutesAgo: 30 });
  await aSession(w.memberA.id, w.orgA.id, w.projectA.id, "Queued", { queuedMinutesAgo: 5 });
  await aSample(busy, 3600, 85);
  await aSample(idle, 7200, 1);
  await aCharge(busy, w.orgA.id, 2_000_000);
  await aCharge(idle, w.orgA.id, 4_000_000);
  await t.deps.db("wallets").insert({
    id: `wal_dash${Date.now().toString(36)}`,
    organization_id: w.orgA.id,
    owner_kind: "user",
    owner_id: w.memberA.id,
    balance: 144_000_000,
  });
}, 60_000);

afterAll(async () => {
  await t?.stop();
});

describe("the dashboard", () => {
  it("shows a member their own sessions, GPU-hours, credits, balance and days left, and nothing of the fleet", async () => {
    const r = await t.request("GET", "/api/v1/dashboard", { token: w.memberA.token });
    expect(r.status).toBe(200);
    expect(r.body.view).toBe("member");
    expect(r.body.admin).toBeNull();
    expect(r.body.me.running).toHaveLength(2);
    expect(r.body.me.paused).toHaveLength(1);
    expect(r.body.me.period.gpu_hours).toBe(3);
    expect(r.body.me.period.credits_spent).toBe("6000000");
    expect(r.body.me.balance).toBe("144000000");
    // Two running sessions: 2 credits/h for one GPU, 4 for two; 144 credits last 24 h at 6 credits/h.
    expect(r.body.me.hourly_rate).toBe("6000000");
    expect(r.body.me.days_left).toBe(1);
  });

  it("gives an organization admin their organization's phases, queue and spend, and no fleet tiles", async () => {
    const r = await t.request("GET", "/api/v1/dashboard", { token: w.adminB.token });
    expect(r.status).toBe(200);
    expect(r.body.view).toBe("admin");
    expect(r.body.admin.sessions_by_phase).toEqual([
      { phase: "Queued", count: 1 },
      { phase: "Running", count: 1 },
    ]);
    expect(r.body.admin.queue.depth).toBe(1);
    expect(r.body.admin.queue.oldest_wait_seconds).toBeGreaterThanOrEqual(29 * 60);
    expect(r.body.admin.spend).toEqual([]);
    expect(r.body.admin.fleet).toBeNull();
    expect(r.body.admin.storage).toBeNull();
  });

  it("gives a super_admin the fleet by cluster and model with free and allocated-but-idle GPUs, and troubled nodes", async () => {
    const r = await t.request("GET", "/api/v1/dashboard", { token: w.superAdmin.token });
    expect(r.status).toBe(200);
    expect(r.body.view).toBe("super_admin");
    const one = r.body.admin.fleet.find((f: { cluster_id: string }) => f.cluster_id === C1);
    expect(one).toMatchObject({ gpu_model: H100, nodes: 2, total: 16, allocated: 3, free: 5, allocated_idle: 2 });
    const two = r.body.admin.fleet.find((f: { cluster_id: string }) => f.cluster_id === C2);
    expect(two).toMatchObject({ gpu_model: A100, total: 4, allocated: 1, free: 0, allocated_idle: 0 });
    expect(r.body.admin.nodes).toMatchObject({ cordoned: 1, not_ready: 1 });
    expect(r.body.admin.queue.depth).toBe(2);
    expect(r.body.admin.spend).toEqual([
      {
        organization_id: w.orgA.id,
        organization_name: "Org A",
        project_id: w.projectA.id,
        project_name: "Project A",
        spent: "6000000",
        gpu_hours: 3,
      },
    ]);
    // No management cluster in this test: the storage tile says it cannot read the pools.
    expect(r.body.admin.storage.status).toBe("unavailable");
  });

  it("narrows the fleet tiles to a selected cluster and marks the storage tile shared across clusters", async () => {
    const r = await t.request("GET", `/api/v1/dashboard?cluster=${C2}`, { token: w.superAdmin.token });
    expect(r.status).toBe(200);
    expect(r.body.admin.fleet.map((f: { cluster_id: string }) => f.cluster_id)).toEqual([C2]);
    expect(r.body.admin.nodes.items.map((x: { name: string }) => x.name)).toEqual(["a-1"]);
    expect(r.body.admin.storage.shared_across_clusters).toBe(true);
  });

  it("still renders its inventory tiles while the metrics server is down", async () => {
    const panel = await t.request("GET", "/api/v1/monitoring/panels/fleet.gpu_utilization", {
      token: w.superAdmin.token,
    });
    expect(panel.status).toBe(503);
    expect(panel.body.error.code).toBe("unavailable");
    const r = await t.request("GET", "/api/v1/dashboard", { token: w.superAdmin.token });
    expect(r.status).toBe(200);
    expect(r.body.admin.fleet.length).toBeGreaterThan(0);
  });

  it("refuses a malformed cluster filter with the envelope", async () => {
    const r = await t.request("GET", "/api/v1/dashboard?cluster=not-a-cluster", { token: w.superAdmin.token });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("validation_failed");
  });
});

describe("the storage tile", () => {
  const pool = (name: string, totalGb: number, availableGb: number): { pool: Pool; capacity: PoolCapacity } => ({
    pool: { metadata: { name } } as Pool,
    capacity: {
      source: "manual",
      via: null,
      stale: false,
      totalGb,
      availableGb,
      provisionedGb: totalGb - availableGb,
      observedAt: null,
    },
  });

  it("shows the largest pool, never the sum of several", () => {
    const tile = storageTile([pool("small", 1000, 900), pool("large", 4000, 3000), pool("mid", 2000, 1500)], undefined);
    expect(tile).toMatchObject({ status: "ok", pool: "large", total_gb: 4000, available_gb: 3000, pools: 3 });
    expect(tile.shared_across_clusters).toBe(false);
  });

  it("is marked shared across clusters when a cluster is selected, and says when there is no pool", () => {
    expect(storageTile([pool("only", 100, 50)], "clu_x").shared_across_clusters).toBe(true);
    expect(storageTile([], undefined).status).toBe("no_pools");
  });
});

describe("the usage and chargeback report", () => {
  const range = () => {
    const from = new Date(Date.now() - 86_400_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    return `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
  };

  it("gives GPU-hours and credits per organization and project, narrowed to what the caller may see", async () => {
    const all = await t.request("GET", `/api/v1/metrics/usage?${range()}`, { token: w.superAdmin.token });
    expect(all.status).toBe(200);
    expect(all.body.data).toEqual([
      {
        organization_id: w.orgA.id,
        organization_name: "Org A",
        project_id: w.projectA.id,
        project_name: "Project A",
        gpu_hours: 3,
        credits: "6000000",
      },
    ]);
    expect(all.body.totals).toEqual({ gpu_hours: 3, credits: "6000000" });
    // Another organization's admin and a member with no session there see none of it (BOLA).
    const b = await t.request("GET", `/api/v1/metrics/usage?${range()}`, { token: w.adminB.token });
    expect(b.body.data).toEqual([]);
    const colleague = await t.request("GET", `/api/v1/metrics/usage?${range()}`, { token: w.orgMemberA.token });
    expect(colleague.body.data).toEqual([]);
    const own = await t.request("GET", `/api/v1/metrics/usage?${range()}`, { token: w.memberA.token });
    expect(own.body.totals.credits).toBe("6000000");
  });

  it("answers CSV a spreadsheet opens", async () => {
    const r = await t.api.call(`/api/v1/metrics/usage?${range()}&format=csv`, { token: w.adminA.token });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/csv");
    const lines = (await r.text()).trim().split("\r\n");
    expect(lines[0]).toBe(
      "organization_id,project_id,gpu_hours,credits_minor_units,from,to,organization_name,project_name",
    );
    expect(lines[1]).toMatch(new RegExp(`^${w.orgA.id},${w.projectA.id},3,6000000,.*,Org A,Project A$`));
  });

  it("refuses a reversed or too long range with the envelope", async () => {
    const now = Date.now();
    const reversed = await t.request(
      "GET",
      `/api/v1/metrics/usage?from=${new Date(now).toISOString()}&to=${new Date(now - 1000).toISOString()}`,
      { token: w.superAdmin.token },
    );
    expect(reversed.status).toBe(400);
    expect(reversed.body.error.details.issues[0].code).toBe("range_order");
    const long = await t.request(
      "GET",
      `/api/v1/metrics/usage?from=${new Date(now - 400 * 86_400_000).toISOString()}&to=${new Date(now).toISOString()}`,
      { token: w.superAdmin.token },
    );
    expect(long.status).toBe(400);
    const missing = await t.request("GET", "/api/v1/metrics/usage", { token: w.superAdmin.token });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe("validation_failed");
  });
});

describe("the dashboard per role", () => {
  itBehavesPerRole(
    [
      {
        name: "/api/v1/dashboard",
        method: "GET",
        path: () => "/api/v1/dashboard",
        allowed: [
          { as: "memberA", status: 200 },
          { as: "adminA", status: 200 },
          { as: "superAdmin", status: 200 },
          { as: "outsider", status: 200 },
        ],
        refused: [],
      },
    ],
    () => ({ t, w }),
  );

  it("never shows another organization's sessions or spend to an organization admin (BOLA)", async () => {
    const a = await t.request("GET", "/api/v1/dashboard", { token: w.adminA.token });
    const orgs = new Set(a.body.admin.spend.map((s: { organization_id: string }) => s.organization_id));
    expect([...orgs]).toEqual([w.orgA.id]);
    const total = a.body.admin.sessions_by_phase.reduce((x: number, p: { count: number }) => x + p.count, 0);
    expect(total).toBe(4);
    const b = await t.request("GET", "/api/v1/dashboard", { token: w.memberB.token });
    expect(b.body.me.running.map((s: { gpu_model: string }) => s.gpu_model)).toEqual([A100]);
    expect(b.body.me.balance).toBe("0");
  });
});
