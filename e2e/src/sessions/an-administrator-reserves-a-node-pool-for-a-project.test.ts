// A super_admin reserves a GPU cluster's labelled nodes for one project. Others' sessions never land there:
// the worker does not place them on the pool's room, and their pods carry a node affinity that keeps the
// kube-scheduler off the pool's nodes; the project's sessions use them. Removing the grant warns the owner
// of a session running there. Real apiservers with kwok nodes, real Postgres, the API and the worker.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import { adminKube, gpuCluster, H100, MANAGEMENT, SESSIONS_NS, type SessionsBed, startSessionsBed } from "./harness.ts";

vi.setConfig({ testTimeout: 180_000 });

let bed: SessionsBed;
let project = "";
let poolId = "";
let grantId = "";
const sessions: Record<string, string> = {};

beforeAll(async () => {
  bed = await startSessionsBed({
    fleet: {
      clusters: [
        MANAGEMENT,
        gpuCluster("gpu-a", [
          { name: "gpu-a-open", gpuModel: H100, gpuCount: 1 },
          { name: "gpu-a-lab", gpuModel: H100, gpuCount: 2, labels: { "berth.dev/pool": "lab" } },
        ]),
      ],
    },
  });
  project = (await bed.t.aProject(bed.org.id, "Lab")).id;
  await bed.t.member(bed.alice, bed.org.id, project, "member");
}, 240_000);
afterAll(async () => {
  await bed?.stop();
});

const body = (name: string, over: Record<string, unknown> = {}) => ({
  offering: "h100",
  preset: "gpu-small",
  image: "jupyterlab",
  name,
  ...over,
});
const clusterId = () => bed.gpu["gpu-a"]?.id as string;

async function podSpec(name: string) {
  const kube = adminKube(bed.fleet.cluster("gpu-a"));
  return (
    await kube.json<{ spec: { nodeName?: string; affinity?: unknown } }>(
      "GET",
      `/api/v1/namespaces/${SESSIONS_NS}/pods/${name}`,
    )
  ).spec;
}

describe("a node pool granted to a project", () => {
  it("is made from the cluster's labelled nodes and granted to the project", async () => {
    const admin = bedApi(bed, bed.superAdmin);
    const pool = await admin.call("createClusterNodePool", {
      params: { clusterId: clusterId() },
      body: { name: "lab", selector: "berth.dev/pool=lab" },
    });
    expect(pool.nodes).toEqual(["gpu-a-lab"]);
    poolId = pool.id;
    const grant = await admin.call("grantClusterNodePool", {
      params: { clusterId: clusterId(), poolId },
      body: { project_id: project },
    });
    grantId = grant.grants[0]?.id as string;
  });

  it("shows each member only the GPUs they may use", async () => {
    const forBob = await bedApi(bed, bed.bob).call("getGpuAvailability");
    expect(forBob.clusters).toEqual([expect.objectContaining({ total: 1, nodes: 1 })]);
    const forAlice = await bedApi(bed, bed.alice).call("getGpuAvailability");
    expect(forAlice.clusters).toEqual([expect.objectContaining({ total: 3, nodes: 2 })]);
  });

  it("keeps another member's sessions off the pool: placed on the open node, its pod barred from the pool", async () => {
    const first = await bed.startRunning(bed.bob, body("bob-1"));
    sessions.bob1 = first.id;
    expect(first.node).toBe("gpu-a-open");
    const spec = await podSpec(first.resource_name);
    expect(spec.affinity).toEqual({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: "berth.dev/pool", operator: "NotIn", values: ["lab"] }] }],
        },
      },
    });

    // The open node is full; the pool's two GPUs are free, and still not for Bob.
    const second = await bedApi(bed, bed.bob).call("createSession", { body: body("bob-2") });
    const waiting = await bed.waitFor(bed.bob, second.id, (s) => s.phase === "Queued", "bob-2 Queued");
    expect(waiting.reason).toBe("NoCapacity");
    expect((await bed.pods("gpu-a")).map((p) => p.name)).not.toContain(second.resource_name);
    sessions.bob2 = second.id;
  });

  it("places the project's sessions on the pool, with no bar on their pods", async () => {
    const mine = await bed.startRunning(bed.alice, body("alice-1", { project_id: project }));
    sessions.alice1 = mine.id;
    expect(mine.node).toBe("gpu-a-lab");
    expect((await podSpec(mine.resource_name)).affinity).toBeUndefined();
    // Bob's queued session is still waiting although the pool has a GPU left.
    const still = await bedApi(bed, bed.bob).call("getSession", { params: { sessionId: sessions.bob2 as string } });
    expect(still.phase).toBe("Queued");
  });

  it("warns the owner of a running session when the grant is removed, and it keeps running", async () => {
    const r = await bedApi(bed, bed.superAdmin).call("revokeClusterNodePoolGrant", {
      params: { clusterId: clusterId(), poolId, grantId },
    });
    expect(r.warned_sessions).toEqual([sessions.alice1]);
    const inbox = await bedApi(bed, bed.alice).call("listNotifications");
    expect(inbox.data).toContainEqual(
      expect.objectContaining({
        kind: "session.node_pool_revoked",
        data: expect.objectContaining({ session_id: sessions.alice1, node: "gpu-a-lab" }),
      }),
    );
    const running = await bedApi(bed, bed.alice).call("getSession", {
      params: { sessionId: sessions.alice1 as string },
    });
    expect(running.phase).toBe("Running");
    // A new session of the project no longer goes there.
    const next = await bedApi(bed, bed.alice).call("createSession", { body: body("alice-2", { project_id: project }) });
    await bed.waitFor(bed.alice, next.id, (s) => s.phase === "Queued", "alice-2 Queued");
  });
});
