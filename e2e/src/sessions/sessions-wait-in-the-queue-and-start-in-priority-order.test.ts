// More sessions than GPUs: the rest wait in the queue with positions, by priority then age, and start
// in that order as GPUs free up. Members cannot jump the queue; an organization admin can raise a
// session's priority. A session pinned to a full cluster waits there even when another has room.
import type { BodyOf } from "@berth/console/client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi, refusalOf } from "../api-client.ts";
import { gpuCluster, H100, MANAGEMENT, type SessionsBed, startSessionsBed } from "./harness.ts";

// Journeys wait on real clusters; a loaded machine (other beds running) stretches them.
vi.setConfig({ testTimeout: 180_000 });

let bed: SessionsBed;
beforeAll(async () => {
  bed = await startSessionsBed({
    fleet: {
      clusters: [
        MANAGEMENT,
        gpuCluster("gpu-a", [{ name: "gpu-a-1", gpuModel: H100, gpuCount: 2 }]),
        gpuCluster("gpu-b", [{ name: "gpu-b-1", gpuModel: H100, gpuCount: 1 }]),
      ],
    },
  });
});
afterAll(async () => {
  await bed?.stop();
});

const h100 = (over: Partial<BodyOf<"createSession">> = {}): BodyOf<"createSession"> => ({
  offering: "h100",
  preset: "gpu-small",
  image: "jupyterlab",
  ...over,
});
/** Creates a session as `who`; its id. */
const create = async (who: { token: string }, body = h100()) =>
  (await bedApi(bed, who).call("createSession", { body })).id;

describe("the queue", () => {
  const running: string[] = [];

  it("queues what does not fit, with positions by priority then age", async () => {
    for (let i = 0; i < 3; i++) running.push(await create(bed.alice));
    for (const id of running) await bed.waitFor(bed.alice, id, (s) => s.phase === "Running", `${id} Running`);

    const s1 = await create(bed.bob, h100({ name: "s1" }));
    await bed.waitFor(bed.bob, s1, (s) => s.phase === "Queued", "s1 Queued");
    const s2 = await create(bed.orgAdmin, h100({ name: "s2" }));
    await bed.waitFor(bed.orgAdmin, s2, (s) => s.phase === "Queued", "s2 Queued");
    const s3 = await create(bed.bob, h100({ name: "s3" }));
    await bed.waitFor(bed.bob, s3, (s) => s.phase === "Queued" && s.queue.position === 3, "s3 third");

    // A member may not raise a priority above the policy's maxPriority (0); the organization admin may.
    const raise = (who: { token: string }) =>
      bedApi(bed, who).call("changeQueuePriority", { params: { sessionId: s3 }, body: { priority: 5 } });
    expect((await refusalOf(raise(bed.bob))).status).toBe(403);
    await raise(bed.orgAdmin);
    await bed.waitFor(bed.bob, s3, (s) => s.queue?.position === 1, "s3 first after the raise");

    // The queue pages over the history rows, which the worker writes just after the resource's status.
    const entries = async (who: typeof bed.bob) =>
      (await bedApi(bed, who).call("listQueue", { query: { scope: "all" } })).data.map((e) => [
        e.session.name,
        e.position,
      ]);
    await expect
      .poll(() => entries(bed.orgAdmin))
      .toEqual([
        ["s3", 1],
        ["s1", 2],
        ["s2", 3],
      ]);
    // bob sees only his own entries, with their real positions.
    expect(await entries(bed.bob)).toEqual([
      ["s3", 1],
      ["s1", 2],
    ]);

    // GPUs free up one at a time: the queue starts in its order.
    const order: string[] = [];
    for (const id of running.splice(0)) {
      await bedApi(bed, bed.alice).call("terminateSession", { params: { sessionId: id } });
      const next = await waitForOneMoreRunning([s1, s2, s3], order);
      order.push(next);
    }
    expect(order).toEqual([s3, s1, s2]);
    running.push(s1, s2, s3);
  });

  it("refuses a fifth live session of one member with quota_exceeded and what was exceeded", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await create(bed.alice));
    const fifth = await refusalOf(create(bed.alice));
    expect(fifth.status).toBe(403);
    expect(fifth).toMatchObject({
      code: "quota_exceeded",
      details: { limit: "maxConcurrentSessionsPerUser", value: 4, current: 4, requested: 1, scope: "global" },
    });
    const bulk = await bedApi(bed, bed.alice).call("bulkTerminateSessions", {
      body: { ids: [...ids, running[0] as string] },
    });
    expect(bulk.results.map((r) => r.status)).toEqual(["accepted", "accepted", "accepted", "accepted", "refused"]);
    expect(bulk.results[4]?.error?.code).toBe("not_found"); // bob's session, invisible to alice
  });

  it("keeps a session pinned to a full cluster waiting there while another cluster has room", async () => {
    const a = bed.gpu["gpu-a"]?.id as string;
    // Free gpu-b: terminate whichever of bob's and the admin's sessions runs there.
    const sessions = await Promise.all(
      running.map((sessionId) => bedApi(bed, bed.orgAdmin).call("getSession", { params: { sessionId } })),
    );
    const onB = sessions.find((s) => s.cluster_id === bed.gpu["gpu-b"]?.id);
    if (!onB) throw new Error("no session runs on gpu-b");
    await bedApi(bed, bed.orgAdmin).call("terminateSession", { params: { sessionId: onB.id } });
    await bed.waitFor(bed.orgAdmin, onB.id, (s) => s.phase === "Terminated", "gpu-b freed");

    const pinned = await create(bed.orgAdmin, h100({ cluster_id: a }));
    const waiting = await bed.waitFor(bed.orgAdmin, pinned, (s) => s.phase === "Queued", "pinned Queued");
    expect(waiting.reason).toBe("PinnedClusterFull");
    const avail = await bedApi(bed, bed.orgAdmin).call("getGpuAvailability");
    expect(avail.clusters.find((c) => c.cluster_id === bed.gpu["gpu-b"]?.id)).toMatchObject({ free: 1, total: 1 });

    const onA = sessions.find((s) => s.cluster_id === a);
    if (!onA) throw new Error("no session runs on gpu-a");
    await bedApi(bed, bed.orgAdmin).call("terminateSession", { params: { sessionId: onA.id } });
    const started = await bed.waitFor(
      bed.orgAdmin,
      pinned,
      (s) => s.phase === "Running",
      "pinned Running on its cluster",
    );
    expect(started.cluster_id).toBe(a);
  });
});

async function waitForOneMoreRunning(ids: string[], seen: string[]): Promise<string> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    for (const id of ids) {
      if (seen.includes(id)) continue;
      const s = await bedApi(bed, bed.orgAdmin).call("getSession", { params: { sessionId: id } });
      if (s.phase === "Starting" || s.phase === "Running") return id;
    }
    if (Date.now() > deadline) throw new Error("no queued session started");
    await new Promise((r) => setTimeout(r, 100));
  }
}
