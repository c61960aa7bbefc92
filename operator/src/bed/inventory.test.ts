// The operator on a real GPU cluster of the test bed, with its least-privilege credential, reporting to a
// stub control plane: the inventory follows the cluster, heartbeats send nothing, an apiserver restart
// is survived.

import type { InventoryNode } from "@berth/crds/internal-plane";
import { A100, type Bed, eventually, H100, SESSIONS_NS, startBed } from "@berth/e2e/operator-bed";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningOperator, startOperator } from "../operator.ts";
import { captureLog } from "../testing/log.test-support.ts";
import { type StubControlPlane, startStubControlPlane } from "../testing/stub-control-plane.test-support.ts";

let bed: Bed;
let stub: StubControlPlane;
let operator: RunningOperator | undefined;
const logs = captureLog("debug", process.env.BERTH_TEST_ECHO_LOGS === "1");

beforeAll(async () => {
  bed = await startBed([
    { name: "h100-1", gpuModel: H100, gpuCount: 8 },
    { name: "a100-1", gpuModel: A100, gpuCount: 4 },
  ]);
  stub = await startStubControlPlane({ tokens: { "token-bed": "clu_bed" } });
  const config = bed.config({
    identity: "operator-0",
    tokenFile: bed.writeToken("token", "token-bed"),
    controlPlaneUrl: stub.url,
    // The report counts below must not meet a periodic resync (a full report) on a slow run.
    resyncMs: 600_000,
  });
  operator = await startOperator(config, { log: logs.log });
});

afterAll(async () => {
  await operator?.stop();
  await stub?.close();
  await bed?.stop();
});

function latestNode(name: string): InventoryNode | undefined {
  return stub.latestInventory("clu_bed")?.nodes.find((n) => n.name === name);
}

/**
 * Waits until no inventory report has arrived for a second (polled, bounded), and returns the count: the
 * previous change has stopped producing reports, however slowly a busy machine delivered it.
 */
async function quietInventories(): Promise<number> {
  let count = stub.inventories().length;
  let since = Date.now();
  return eventually(() => {
    const now = stub.inventories().length;
    if (now !== count) {
      count = now;
      since = Date.now();
    }
    return Date.now() - since >= 1_000 ? count : undefined;
  }, "no inventory report for a second");
}

async function createGpuPod(name: string, gpus: number): Promise<void> {
  await bed.admin.json("POST", `/api/v1/namespaces/${SESSIONS_NS}/pods`, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      runtimeClassName: "nvidia",
      containers: [{ name: "lab", image: "jupyter", resources: { limits: { "nvidia.com/gpu": String(gpus) } } }],
    },
  });
}

describe("the operator's inventory on a GPU cluster", () => {
  it("reports every GPU node once it has listed nodes and pods", async () => {
    const report = await eventually(() => stub.latestInventory("clu_bed"), "a first inventory");
    expect(report.nodes.map((n) => n.name)).toEqual(["a100-1", "h100-1"]);
    expect(report.nodes[1]).toMatchObject({
      name: "h100-1",
      gpu_model: H100,
      gpu_count: 8,
      gpu_allocatable: 8,
      gpu_in_use: 0,
      schedulable: true,
      ready: true,
    });
    expect(report.nodes[1]?.devices).toHaveLength(8);
    expect(report.nodes[1]?.labels["nvidia.com/gpu.product"]).toBe(H100);
    expect(Date.parse(report.observed_at)).toBeGreaterThan(0);
    await eventually(async () => (await fetch(operator?.healthUrl ?? "")).status === 200, "healthz ok");
  });

  it("counts the GPUs of a pod bound to a node as in use, and frees them when it is deleted", async () => {
    await createGpuPod("lab-1", 3);
    const node = await eventually(
      () => latestNode("h100-1")?.gpu_in_use === 3 || latestNode("a100-1")?.gpu_in_use === 3,
      "3 GPUs in use",
    );
    expect(node).toBe(true);
    await bed.admin.json("DELETE", `/api/v1/namespaces/${SESSIONS_NS}/pods/lab-1?gracePeriodSeconds=0`);
    await eventually(
      () => latestNode("h100-1")?.gpu_in_use === 0 && latestNode("a100-1")?.gpu_in_use === 0,
      "GPUs freed",
    );
  });

  it("follows a node added, cordoned and deleted", async () => {
    await bed.gpu.addGpuNode({ name: "h100-2", gpuModel: H100, gpuCount: 8, labels: { "berth.dev/pool": "extra" } });
    const added = await eventually(
      () => (latestNode("h100-2")?.ready ? latestNode("h100-2") : undefined),
      "h100-2 reported Ready",
    );
    expect(added).toMatchObject({ gpu_count: 8, schedulable: true, labels: { "berth.dev/pool": "extra" } });

    await bed.admin.json(
      "PATCH",
      "/api/v1/nodes/h100-2",
      { spec: { unschedulable: true } },
      "application/merge-patch+json",
    );
    await eventually(() => latestNode("h100-2")?.schedulable === false, "h100-2 reported cordoned");

    await bed.admin.json("DELETE", "/api/v1/nodes/h100-2");
    await eventually(
      () => stub.latestInventory("clu_bed")?.nodes.every((n) => n.name !== "h100-2"),
      "h100-2 gone from the inventory",
    );
    expect(stub.latestInventory("clu_bed")?.nodes.map((n) => n.name)).toEqual(["a100-1", "h100-1"]);
  });

  it("sends nothing for a status heartbeat, and exactly one report for the next real change", async () => {
    const before = await quietInventories();
    const node = await bed.admin.json<{ status: { conditions: { type: string; lastHeartbeatTime?: string }[] } }>(
      "GET",
      "/api/v1/nodes/h100-1",
    );
    const conditions = node.status.conditions.map((c) => ({
      ...c,
      lastHeartbeatTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    }));
    const beat = await bed.admin.json<{ metadata: { resourceVersion: string } }>(
      "PATCH",
      "/api/v1/nodes/h100-1/status",
      { status: { conditions } },
      "application/strategic-merge-patch+json",
    );
    // The operator's nodes watch has shown the heartbeat and nothing it woke is waiting or on its way.
    await eventually(() => operator?.inventory()?.settledPast(beat.metadata.resourceVersion), "the heartbeat seen");
    expect(stub.inventories().length).toBe(before);

    await bed.admin.json(
      "PATCH",
      "/api/v1/nodes/h100-1",
      { metadata: { labels: { "berth.dev/pool": "main" } } },
      "application/merge-patch+json",
    );
    await eventually(() => latestNode("h100-1")?.labels["berth.dev/pool"] === "main", "the label reported");
    expect(await quietInventories()).toBe(before + 1);
  });

  it("survives an apiserver restart: the watches resume and a change made afterwards is reported", async () => {
    await bed.gpu.restartApiServer();
    await bed.gpu.addGpuNode({ name: "h100-3", gpuModel: H100, gpuCount: 8 });
    await eventually(() => latestNode("h100-3")?.ready, "h100-3 reported after the restart", 30_000);
    await eventually(async () => (await fetch(operator?.healthUrl ?? "")).status === 200, "healthz ok again");
    const watchFailures = logs.records.filter((r) => r.msg === "watch failed; retrying");
    expect(watchFailures.length).toBeGreaterThan(0); // it did notice the restart
    const metrics = await (await fetch(operator?.metricsUrl ?? "")).text();
    expect(metrics).toMatch(/berth_operator_watch_synced\{resource="nodes"[^}]*\} 1/);
    expect(metrics).toMatch(/berth_operator_leader\{[^}]*\} 1/);
  });

  it("reports through a credential that holds only the rules of rbac.ts", async () => {
    // The operator's token is the minted ServiceAccount's: cluster-wide writes are refused to it.
    const kubeconfig = (await import("node:fs")).readFileSync(bed.kubeconfigPath, "utf8");
    const token = /token: (\S+)/.exec(kubeconfig)?.[1] ?? "";
    const { KubeHttp } = await import("@berth/e2e");
    const asOperator = new KubeHttp({ server: bed.gpu.server, caPem: bed.gpu.caPem, token });
    try {
      expect((await asOperator.raw("GET", "/api/v1/nodes")).status).toBe(200);
      expect(
        (
          await asOperator.raw(
            "PATCH",
            "/api/v1/nodes/h100-1",
            { spec: { unschedulable: true } },
            "application/merge-patch+json",
          )
        ).status,
      ).toBe(403);
      expect((await asOperator.raw("GET", "/api/v1/namespaces/kube-system/secrets")).status).toBe(403);
      expect((await asOperator.raw("GET", `/api/v1/namespaces/${SESSIONS_NS}/pods`)).status).toBe(200);
      // No Service per session any more (the gateway follows the pods' addresses): nor the right to make one.
      expect((await asOperator.raw("GET", `/api/v1/namespaces/${SESSIONS_NS}/services`)).status).toBe(403);
    } finally {
      asOperator.close();
    }
  });
});
