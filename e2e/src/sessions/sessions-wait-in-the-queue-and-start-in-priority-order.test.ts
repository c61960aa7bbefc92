// More sessions than GPUs: the rest wait in the queue with positions, by priority then age, and start
// in that order as GPUs free up. Members cannot jump the queue; an organization admin can raise a
// session's priority. A session pinned to a full cluster waits there even when another has room.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
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

const h100 = (over: Record<string, unknown> = {}) => ({
  offering: "h100",
  preset: "gpu-small",
  image: "jupyterlab",
  ...over,
});

describe("the queue", () => {
  const running: string[] = [];

  it("queues what does not fit, with positions by priority then age", async () => {
    for (let i = 0; i < 3; i++) running.push((await bed.call(bed.alice, "POST", "/api/v1/sessions", h100())).body.id);
    for (const id of running) await bed.waitFor(bed.alice, id, (s) => s.phase === "Running", `${id} Running`);

    const s1 = (await bed.call(bed.bob, "POST", "/api/v1/sessions", h100({ name: "s1" }))).body.id as string;
    await bed.waitFor(bed.bob, s1, (s) => s.phase === "Queued", "s1 Queued");
    const s2 = (await bed.call(bed.orgAdmin, "POST", "/api/v1/sessions", h100({ name: "s2" }))).body.id as string;
    await bed.waitFor(bed.orgAdmin, s2, (s) => s.phase === "Queued", "s2 Queued");
    const s3 = (await bed.call(bed.bob, "POST", "/api/v1/sessions", h100({ name: "s3" }))).body.id as string;
    await bed.waitFor(bed.bob, s3, (s) => s.phase === "Queued" && s.queue.position === 3, "s3 third");

    // A member may not raise a priority above the policy's maxPriority (0); the organization admin may.
    const refused = await bed.call(bed.bob, "PATCH", `/api/v1/queue/${s3}`, { priority: 5 });
    expect(refused.status).toBe(403);
    expect((await bed.call(bed.orgAdmin, "PATCH", `/api/v1/queue/${s3}`, { priority: 5 })).status).toBe(200);
    await bed.waitFor(bed.bob, s3, (s) => s.queue?.position === 1, "s3 first after the raise");

    // The queue pages over the history rows, which the worker writes just after the resource's status.
    const entries = async (who: typeof bed.bob) =>
      (await bed.call(who, "GET", "/api/v1/queue?scope=all")).body.data.map(
        (e: { session: { name: string }; position: number }) => [e.session.name, e.position],
      );
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
      expect((await bed.call(bed.alice, "POST", `/api/v1/sessions/${id}/terminate`)).status).toBe(202);
      const next = await waitForOneMoreRunning([s1, s2, s3], order);
      order.push(next);
    }
    expect(order).toEqual([s3, s1, s2]);
    running.push(s1, s2, s3);
  });

  it("refuses a fifth live session of one member with quota_exceeded and what was exceeded", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await bed.call(bed.alice, "POST", "/api/v1/sessions", h100());
      expect(r.status).toBe(201);
      ids.push(r.body.id);
    }
    const fifth = await bed.call(bed.alice, "POST", "/api/v1/sessions", h100());
    expect(fifth.status).toBe(403);
    expect(fifth.body.error).toMatchObject({
      code: "quota_exceeded",
      details: { limit: "maxConcurrentSessionsPerUser", value: 4, current: 4, requested: 1, scope: "global" },
    });
    const bulk = await bed.call(bed.alice, "POST", "/api/v1/sessions/bulk-terminate", { ids: [...ids, running[0]] });
    expect(bulk.status).toBe(200);
    expect(bulk.body.results.map((r: { status: string }) => r.status)).toEqual([
      "accepted",
      "accepted",
      "accepted",
      "accepted",
      "refused",
    ]);
    expect(bulk.body.results[4].error.code).toBe("not_found"); // bob's session, invisible to alice
  });

  it("keeps a session pinned to a full cluster waiting there while another cluster has room", async () => {
    const a = bed.gpu["gpu-a"]?.id as string;
    // Free gpu-b: terminate whichever of bob's and the admin's sessions runs there.
    const sessions = await Promise.all(
      running.map(async (id) => (await bed.call(bed.orgAdmin, "GET", `/api/v1/sessions/${id}`)).body),
    );
    const onB = sessions.find((s) => s.cluster_id === bed.gpu["gpu-b"]?.id);
    await bed.call(bed.orgAdmin, "POST", `/api/v1/sessions/${onB.id}/terminate`);
    await bed.waitFor(bed.orgAdmin, onB.id, (s) => s.phase === "Terminated", "gpu-b freed");

    const pinned = (await bed.call(bed.orgAdmin, "POST", "/api/v1/sessions", h100({ cluster_id: a }))).body
      .id as string;
    const waiting = await bed.waitFor(bed.orgAdmin, pinned, (s) => s.phase === "Queued", "pinned Queued");
    expect(waiting.reason).toBe("PinnedClusterFull");
    const avail = await bed.call(bed.orgAdmin, "GET", "/api/v1/sessions/gpu-availability");
    expect(
      avail.body.clusters.find((c: { cluster_id: string }) => c.cluster_id === bed.gpu["gpu-b"]?.id),
    ).toMatchObject({ free: 1, total: 1 });

    const onA = sessions.find((s) => s.cluster_id === a);
    await bed.call(bed.orgAdmin, "POST", `/api/v1/sessions/${onA.id}/terminate`);
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
      const s = (await bed.call(bed.orgAdmin, "GET", `/api/v1/sessions/${id}`)).body;
      if (s.phase === "Starting" || s.phase === "Running") return id;
    }
    if (Date.now() > deadline) throw new Error("no queued session started");
    await new Promise((r) => setTimeout(r, 100));
  }
}
