// A super_admin cordons, uncordons, drains and deletes GPU nodes. The control plane does it on the node's
// cluster with that cluster's registered (least-privilege) credential, records what it did, and the
// inventory shows it at once; the operator's next report agrees.
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyInventory } from "@berth/api/testing";
import { ClusterKind, resourcePath } from "@berth/crds";
import { operatorRbac } from "@berth/operator";
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bedApi, refusalOf } from "../api-client.ts";
import { type KubeHttp, kubeConfigFrom } from "../index.ts";
import { eventually, statusFrom } from "../testbed/waiting.test-support.ts";
import { adminKube, type ClustersBed, startClustersBed } from "./harness.ts";
import { registerLocalGpuClusters } from "./register-local.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";
const SESSIONS = "berth-sessions";

let bed: ClustersBed;
let kube: KubeHttp;
let clusterId: string;

interface KNode {
  metadata: { name: string; labels?: Record<string, string> };
  spec?: { unschedulable?: boolean };
  status?: {
    allocatable?: Record<string, string>;
    capacity?: Record<string, string>;
    conditions?: { type: string; status: string }[];
  };
}

/** What the operator would report: the cluster's nodes as they are now. */
async function reportFromCluster(): Promise<void> {
  const list = await kube.json<{ items: KNode[] }>("GET", "/api/v1/nodes");
  await applyInventory(
    bed.t.deps,
    clusterId,
    new Date(),
    list.items.map((n) => {
      const gpus = Number(n.status?.allocatable?.["nvidia.com/gpu"] ?? 0);
      return {
        name: n.metadata.name,
        gpu_model: n.metadata.labels?.["nvidia.com/gpu.product"] ?? null,
        gpu_count: Number(n.status?.capacity?.["nvidia.com/gpu"] ?? 0),
        gpu_allocatable: gpus,
        gpu_in_use: 0,
        labels: n.metadata.labels ?? {},
        schedulable: !n.spec?.unschedulable,
        ready: n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false,
        devices: Array.from({ length: gpus }, (_, index) => ({ index })),
      };
    }),
  );
}

async function aPod(namespace: string, name: string, node: string, labels: Record<string, string> = {}): Promise<void> {
  await eventually(
    async () => {
      const res = await kube.raw("POST", `/api/v1/namespaces/${namespace}/pods`, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, namespace, labels },
        spec: {
          nodeName: node,
          automountServiceAccountToken: false,
          containers: [{ name: "main", image: "registry.invalid/session:1" }],
        },
      });
      if (res.status === 201 || res.status === 409) return true;
      throw new Error(`${res.status} ${res.text}`);
    },
    { what: `pod ${namespace}/${name}` },
  );
}

const admin = () => bedApi(bed, bed.superAdmin);
/** The super_admin asks for `action` on `node` of `cluster` (answered means 200, its one success status). */
const act = (node: string, action: "cordonNode" | "uncordonNode" | "drainNode", cluster = clusterId) =>
  admin().call(action, { params: { clusterId: cluster, nodeName: node }, body: {} });

beforeAll(async () => {
  bed = await startClustersBed({
    clusters: [
      { name: "mgmt", kind: "management" },
      {
        name: "gpu-a",
        kind: "gpu",
        nodes: [1, 2, 3].map((i) => ({ name: `gpu-a-${i}`, gpuModel: H100, gpuCount: 8 })),
        gpuRuntimeClass: true,
        gpuDevicePlugin: true,
      },
    ],
  });
  kube = adminKube(bed.fleet.cluster("gpu-a"));
  const res = await admin().call("registerCluster", {
    body: { name: "gpu-a", session_domain: "gpu-a.sessions.localhost", credential: await bed.credentialFor("gpu-a") },
  });
  clusterId = res.cluster.id;
  await reportFromCluster();
});

afterAll(async () => {
  kube?.close();
  await bed?.stop();
});

describe("node actions", () => {
  it("cordon marks the node unschedulable on its cluster and in the inventory at once", async () => {
    const res = await act("gpu-a-1", "cordonNode");
    expect(res).toMatchObject({
      cluster_id: clusterId,
      node: "gpu-a-1",
      action: "cordon",
      outcome: "success",
      schedulable: false,
      node_state: { schedulable: false },
    });
    const node = await kube.json<KNode>("GET", "/api/v1/nodes/gpu-a-1");
    expect(node.spec?.unschedulable).toBe(true);
    const listed = await admin().call("listNodes", { query: { cluster: clusterId } });
    expect(listed.data.find((n) => n.name === "gpu-a-1")?.schedulable).toBe(false);
    // The operator's next report agrees.
    await reportFromCluster();
    expect(
      (await bed.t.database.db("cluster_nodes").where({ cluster_id: clusterId, name: "gpu-a-1" }).first()).schedulable,
    ).toBe(false);
    const recorded = await bed.t.database
      .db("cluster_node_actions")
      .where({ cluster_id: clusterId, node_name: "gpu-a-1", action: "cordon" });
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ outcome: "success", actor_id: bed.superAdmin.id });
  });

  it("uncordon makes it schedulable again", async () => {
    const res = await act("gpu-a-1", "uncordonNode");
    expect(res).toMatchObject({ action: "uncordon", schedulable: true, node_state: { schedulable: true } });
    const node = await kube.json<KNode>("GET", "/api/v1/nodes/gpu-a-1");
    expect(node.spec?.unschedulable).toBeFalsy();
  });

  it("drain cordons the node and evicts Berth's session pods on it, and leaves everything else", async () => {
    await aPod(SESSIONS, "ses-drained", "gpu-a-2");
    await aPod(SESSIONS, "ses-elsewhere", "gpu-a-1");
    await aPod("default", "not-berths", "gpu-a-2");
    const res = await act("gpu-a-2", "drainNode");
    expect(res).toMatchObject({
      action: "drain",
      outcome: "success",
      schedulable: false,
      evictions: [{ pod: "ses-drained", namespace: SESSIONS, result: "evicted" }],
    });
    expect((await kube.json<KNode>("GET", "/api/v1/nodes/gpu-a-2")).spec?.unschedulable).toBe(true);
    await eventually(
      async () => {
        const pod = await kube.raw<{ metadata?: { deletionTimestamp?: string } }>(
          "GET",
          `/api/v1/namespaces/${SESSIONS}/pods/ses-drained`,
        );
        return pod.status === 404 || !!pod.body.metadata?.deletionTimestamp;
      },
      { what: "the drained pod to go" },
    );
    for (const [ns, name] of [
      [SESSIONS, "ses-elsewhere"],
      ["default", "not-berths"],
    ]) {
      const pod = await kube.json<{ metadata: { deletionTimestamp?: string } }>(
        "GET",
        `/api/v1/namespaces/${ns}/pods/${name}`,
      );
      expect(pod.metadata.deletionTimestamp, `${ns}/${name}`).toBeUndefined();
    }
    const recorded = await bed.t.database
      .db("cluster_node_actions")
      .where({ cluster_id: clusterId, node_name: "gpu-a-2", action: "drain" })
      .first();
    expect(recorded.result.evictions).toEqual([{ pod: "ses-drained", namespace: SESSIONS, result: "evicted" }]);
  });

  it("drain reports a pod its disruption budget protects as blocked, and the outcome as partial", async () => {
    await aPod(SESSIONS, "ses-protected", "gpu-a-3", { app: "protected" });
    await kube.json("POST", `/apis/policy/v1/namespaces/${SESSIONS}/poddisruptionbudgets`, {
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: "protected", namespace: SESSIONS },
      spec: { minAvailable: 1, selector: { matchLabels: { app: "protected" } } },
    });
    const res = await act("gpu-a-3", "drainNode");
    expect(res.outcome).toBe("partial");
    expect(res.evictions).toEqual([
      { pod: "ses-protected", namespace: SESSIONS, result: "blocked", message: expect.any(String) },
    ]);
    const pod = await kube.json<{ metadata: { deletionTimestamp?: string } }>(
      "GET",
      `/api/v1/namespaces/${SESSIONS}/pods/ses-protected`,
    );
    expect(pod.metadata.deletionTimestamp).toBeUndefined();
  });

  it("delete removes the node from its cluster and its row and devices from the inventory", async () => {
    expect(await bed.t.database.db("gpu_devices").where({ cluster_id: clusterId, node_name: "gpu-a-3" })).toHaveLength(
      8,
    );
    const res = await admin().call("deleteNode", { params: { clusterId, nodeName: "gpu-a-3" } });
    expect(res).toMatchObject({ action: "delete", outcome: "success", deleted: true });
    expect((await kube.raw("GET", "/api/v1/nodes/gpu-a-3")).status).toBe(404);
    expect(await bed.t.database.db("cluster_nodes").where({ cluster_id: clusterId, name: "gpu-a-3" })).toHaveLength(0);
    expect(await bed.t.database.db("gpu_devices").where({ cluster_id: clusterId, node_name: "gpu-a-3" })).toHaveLength(
      0,
    );
    const pools = await admin().call("listNodePools", { query: { cluster: clusterId } });
    expect(pools.data[0]).toMatchObject({ nodes: 2, gpu_count: 16 });
  });

  it("answers 404 for a node or cluster that does not exist", async () => {
    const node = await refusalOf(act("gpu-a-404", "cordonNode"));
    expect(node.status).toBe(404);
    expect(node.code).toBe("not_found");
    const cluster = await refusalOf(act("gpu-a-1", "cordonNode", "clu_doesnotexist"));
    expect(cluster.status).toBe(404);
    const invalid = await refusalOf(act("Not_A_Node", "cordonNode"));
    expect(invalid.status).toBe(400);
  });
});

describe("npm start's registration of the local GPU clusters", () => {
  it("registers each GPU cluster, writes its operator token file, and is safe to run again", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "berth-operators-"));
    try {
      await admin().call("deregisterCluster", { params: { clusterId } });
      const [first] = await registerLocalGpuClusters({
        deps: bed.t.deps,
        fleet: bed.fleet,
        dataDir,
        operator: { rbac: operatorRbac() },
      });
      expect(first).toMatchObject({ cluster: "gpu-a", sessionDomain: "gpu-a.sessions.localhost" });
      // The operator's own least-privilege kubeconfig: it reads nodes, and no Secrets.
      const operatorCore = kubeConfigFrom(readFileSync(first?.operatorKubeconfigFile ?? "", "utf8")).makeApiClient(
        CoreV1Api,
      );
      expect(await statusFrom(() => operatorCore.listNode())).toBe(200);
      expect(await statusFrom(() => operatorCore.listNamespacedSecret({ namespace: "berth-system" }))).toBe(403);
      expect(statSync(first?.tokenFile ?? "").mode & 0o777).toBe(0o600);
      const claims = await bed.runtime.tokens.verify(readFileSync(first?.tokenFile ?? "", "utf8").trim());
      expect(claims.clusterId).toBe(first?.clusterId);

      // Again: same registration, a new token in the same file.
      const [second] = await registerLocalGpuClusters({ deps: bed.t.deps, fleet: bed.fleet, dataDir });
      expect(second?.clusterId).toBe(first?.clusterId);
      const again = await bed.runtime.tokens.verify(readFileSync(second?.tokenFile ?? "", "utf8").trim());
      expect(again.jti).not.toBe(claims.jti);

      // A registration the management cluster no longer has is closed and made anew.
      const mgmt = adminKube(bed.fleet.cluster("mgmt"));
      await mgmt.json("DELETE", resourcePath(ClusterKind, { name: (first?.clusterId ?? "").replace("_", "-") }));
      mgmt.close();
      const [third] = await registerLocalGpuClusters({ deps: bed.t.deps, fleet: bed.fleet, dataDir });
      expect(third?.clusterId).not.toBe(first?.clusterId);
      expect(
        (await bed.t.database.db("clusters").where({ id: first?.clusterId }).first()).deregistered_at,
      ).toBeInstanceOf(Date);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
