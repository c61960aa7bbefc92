// A GPU starts reporting XID errors. The stand-in DCGM exporter raises them, the cluster's operator
// scrapes and forwards its metrics as usual, and the control plane's rule (XID 79 twice within ten
// minutes, drain) drains the node on the real apiserver (`spec.unschedulable`), tells every super_admin
// and the session's owner, fires the `node.drained` webhook with the reason, and the session is placed
// again on the healthy node. Putting the node back takes an administrator and a reason in the audit log.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi, refusalOf } from "../api-client.ts";
import { type RunningGpuExporter, startGpuExporter } from "../testbed/gpu-exporter.ts";
import { eventually } from "../testbed/waiting.test-support.ts";
import { adminKube, gpuCluster, H100, MANAGEMENT, type SessionsBed, startSessionsBed } from "./harness.ts";

vi.setConfig({ testTimeout: 180_000 });

let bed: SessionsBed;
let exporter: RunningGpuExporter;
const CARD = {
  "gpu-a-1": "GPU-11111111-aaaa-4bbb-8ccc-000000000001",
  "gpu-a-2": "GPU-22222222-aaaa-4bbb-8ccc-000000000002",
};

beforeAll(async () => {
  exporter = await startGpuExporter({
    cards: Object.entries(CARD).map(([node, uuid]) => ({ uuid, node, model: H100, memoryMiB: 81_559 })),
  });
  bed = await startSessionsBed({
    fleet: {
      clusters: [
        MANAGEMENT,
        gpuCluster("gpu-a", [
          { name: "gpu-a-1", gpuModel: H100, gpuCount: 1 },
          { name: "gpu-a-2", gpuModel: H100, gpuCount: 1 },
        ]),
      ],
    },
    operatorGpuMetrics: { url: exporter.url, intervalMs: 500 },
  });
}, 240_000);
afterAll(async () => {
  await bed?.stop();
  await exporter?.stop();
});

const db = () => bed.t.database.db;
const nodeSpec = async (name: string) =>
  (
    await adminKube(bed.fleet.cluster("gpu-a")).json<{ spec: { unschedulable?: boolean } }>(
      "GET",
      `/api/v1/nodes/${name}`,
    )
  ).spec;

let session: { id: string; node: string };
let faulty = "";
let healthy = "";

describe("a node whose GPU reports hardware faults", () => {
  it("is watched under the administrators' rule", async () => {
    const rule = await bedApi(bed, bed.superAdmin).call("updateSystemSettings", {
      body: { hardware_faults: { xids: [79], threshold: 2, window_minutes: 10, action: "drain" } },
    });
    expect(rule.hardware_faults).toEqual({
      xids: [79],
      ecc_double_bit: true,
      threshold: 2,
      window_minutes: 10,
      action: "drain",
    });
    // An organization's endpoint subscribed to node events (written directly: its host need not resolve here).
    await db()("webhook_endpoints").insert({
      id: "whk_faultjourney",
      organization_id: bed.org.id,
      url: "https://hooks.example.test/berth",
      event_types: ["node.cordoned", "node.drained"],
      secret: "whsec_test",
      created_by: bed.orgAdmin.id,
      created_at: new Date(),
      updated_at: new Date(),
    });
    session = await bed.startRunning(bed.alice, {
      offering: "h100",
      preset: "gpu-small",
      image: "jupyterlab",
      name: "fit",
    });
    faulty = session.node;
    healthy = faulty === "gpu-a-1" ? "gpu-a-2" : "gpu-a-1";
    // The operator's first rounds are the nodes' baseline.
    await eventually(
      async () => ((await db()("node_fault_counters").where({ node_name: faulty })).length > 0 ? true : undefined),
      { what: "the faulty node's counters" },
    );
  });

  it("counts one XID 79 and an XID the rule ignores, and leaves the node in service", async () => {
    exporter.raiseXid(CARD[faulty as keyof typeof CARD], 79);
    exporter.raiseXid(CARD[faulty as keyof typeof CARD], 13);
    await eventually(
      async () => ((await db()("node_fault_events").where({ node_name: faulty })).length === 2 ? true : undefined),
      { what: "two faults recorded" },
    );
    expect((await nodeSpec(faulty)).unschedulable).toBeUndefined();
  });

  it("drains it at the second XID 79, tells the administrators, the owner and the webhook", async () => {
    exporter.raiseXid(CARD[faulty as keyof typeof CARD], 79);
    await eventually(async () => ((await nodeSpec(faulty)).unschedulable === true ? true : undefined), {
      what: "the node cordoned on its cluster",
    });
    // Told right after the cordon is carried out.
    const cordoned = await eventually(
      async () =>
        (await bedApi(bed, bed.superAdmin).call("listNotifications", { query: { kind: "node.fault_cordoned" } }))
          .data[0],
      { what: "the administrators' notification" },
    );
    expect(cordoned).toMatchObject({
      severity: "critical",
      data: { node: faulty, action: "drain", carried_out: true },
    });
    expect(cordoned.data.reason).toContain(`2 × XID 79 on ${CARD[faulty as keyof typeof CARD]}`);
    const owner = await bedApi(bed, bed.alice).call("listNotifications");
    expect(owner.data).toContainEqual(
      expect.objectContaining({
        kind: "session.node_fault",
        data: expect.objectContaining({ session_id: session.id }),
      }),
    );
    const events = await db()("webhook_events").where({ type: "node.drained" });
    expect(events).toHaveLength(1);
    expect(events[0].payload.data).toMatchObject({ node: faulty, actor_id: null });
    expect(events[0].payload.data.reason).toContain("XID 79");
  });

  it("places the session again on the healthy node", async () => {
    const moved = await bed.waitFor(
      bed.alice,
      session.id,
      (s) => s.phase === "Running" && s.node === healthy,
      "Running elsewhere",
      120_000,
    );
    expect(moved.node).toBe(healthy);
  });

  it("takes an administrator and a reason to put the node back", async () => {
    const params = { clusterId: bed.gpu["gpu-a"]?.id as string, nodeName: faulty };
    const admin = bedApi(bed, bed.superAdmin);
    const bare = await refusalOf(admin.call("uncordonNode", { params, body: {} }));
    expect([bare.status, bare.code]).toEqual([400, "validation_failed"]);
    const byMember = await refusalOf(
      bedApi(bed, bed.alice).call("uncordonNode", { params, body: { reason: "looks fine" } }),
    );
    expect(byMember.status).toBe(403);
    await admin.call("uncordonNode", { params, body: { reason: "card reseated, dcgmi diag level 3 passed" } });
    expect((await nodeSpec(faulty)).unschedulable).toBeFalsy();
    const audit = await admin.call("listAuditLogs", { query: { action: "node.uncordon" } });
    expect(JSON.stringify(audit.data)).toContain("card reseated, dcgmi diag level 3 passed");
  });
});
