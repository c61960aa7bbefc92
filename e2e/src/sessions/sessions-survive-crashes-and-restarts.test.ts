// Processes die and apiservers restart: an operator killed mid-flight is replaced by its standby, which
// converges on exactly one pod per session; the worker fails over to another replica without placing
// anything twice; the management and GPU apiservers restart under running watches.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type SessionsBed, startSessionsBed } from "./harness.ts";

// Journeys wait on real clusters; a loaded machine (other beds running) stretches them.
vi.setConfig({ testTimeout: 180_000 });

let bed: SessionsBed;
beforeAll(async () => {
  bed = await startSessionsBed();
});
afterAll(async () => {
  await bed?.stop();
});

const l4 = { offering: "l4", preset: "gpu-small", image: "terminal" };
const h100 = { offering: "h100", preset: "gpu-small", image: "jupyterlab" };

describe("an operator killed mid-flight", () => {
  it("is replaced by its standby, which makes exactly one pod per session", async () => {
    const gpuB = bed.gpu["gpu-b"];
    if (!gpuB) throw new Error("no gpu-b");
    const first = gpuB.operator;
    const standby = await gpuB.startOperator("gpu-b-standby");
    expect(standby.isLeader()).toBe(false);
    const answers = await Promise.all([
      bed.call(bed.alice, "POST", "/api/v1/sessions", l4),
      bed.call(bed.bob, "POST", "/api/v1/sessions", l4),
    ]);
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(201);
    const ids = answers.map((r) => r.body.id as string);
    // Kill the leader as soon as it has made the first pod: it has started, and the standby takes over what
    // it was doing. (kwok runs a pod at once, so whether both pods were already Running at the kill is
    // down to timing; the test does not claim more than "after its first pod".)
    const ours = (p: { name: string }) => ids.some((id) => id.replace("_", "-") === p.name);
    let atKill: Awaited<ReturnType<typeof bed.pods>> = [];
    for (const t0 = Date.now(); Date.now() - t0 < 60_000; ) {
      atKill = (await bed.pods("gpu-b")).filter(ours);
      if (atKill.length > 0) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    await first?.stop({ release: false });
    expect(atKill.length, "the operator made a pod before it was killed").toBeGreaterThan(0);
    for (const [i, id] of ids.entries())
      await bed.waitFor(
        i === 0 ? bed.alice : bed.bob,
        id,
        (s) => s.phase === "Running",
        `${id} Running after the failover`,
        60_000,
      );
    // A quick dispatch may have had both pods reported Running before the kill: the sessions are then
    // Running before the dead leader's lease (5 s) expires. The standby takes over all the same.
    for (const t0 = Date.now(); !standby.isLeader() && Date.now() - t0 < 30_000; )
      await new Promise((r) => setTimeout(r, 100));
    expect(standby.isLeader()).toBe(true);
    const pods = await bed.pods("gpu-b");
    const names = pods.filter((p) => !p.deleting).map((p) => p.name);
    expect(names.sort()).toEqual(ids.map((id) => id.replace("_", "-")).sort());
  });
});

describe("the worker failing over", () => {
  it("hands the lease to another replica, which places new sessions once and only once", async () => {
    const second = await bed.startWorker("worker-2");
    expect(second.isLeader()).toBe(false);
    await bed.worker.stop({ release: false });
    await second.leading(30_000);
    const id = (await bed.call(bed.orgAdmin, "POST", "/api/v1/sessions", h100)).body.id as string;
    const s = await bed.waitFor(bed.orgAdmin, id, (x) => x.phase === "Running", "Running under the new leader", 60_000);
    const pods = (await bed.pods("gpu-a")).filter((p) => p.name === s.resource_name);
    expect(pods).toHaveLength(1);
    // Every session placed once: one Started event each (a placement's one Event), and placed once.
    const events = await bed.call(bed.orgAdmin, "GET", `/api/v1/sessions/${id}/resource/events`);
    expect(events.body.data.filter((e: { reason: string }) => e.reason === "Started")).toHaveLength(1);
  });
});

describe("apiserver restarts", () => {
  it("are survived by the worker's and the operators' watches", async () => {
    await bed.fleet.cluster("mgmt").restartApiServer();
    await bed.fleet.cluster("gpu-a").restartApiServer();
    // Right after a restart the apiserver may still answer 429 "storage is (re)initializing": the API
    // says 503 unavailable, and a client retries with the same Idempotency-Key.
    let created = await bed.call(bed.alice, "POST", "/api/v1/sessions", h100, { "Idempotency-Key": "after-restarts" });
    for (let i = 0; created.status === 503 && i < 60; i++) {
      await new Promise((r) => setTimeout(r, 500));
      created = await bed.call(bed.alice, "POST", "/api/v1/sessions", h100, { "Idempotency-Key": "after-restarts" });
    }
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    await bed.waitFor(bed.alice, id, (s) => s.phase === "Running", "Running after both restarts", 90_000);
    expect((await bed.call(bed.alice, "POST", `/api/v1/sessions/${id}/pause`)).status).toBe(202);
    await bed.waitFor(bed.alice, id, (s) => s.phase === "Paused", "Paused after both restarts", 60_000);
  });
});
