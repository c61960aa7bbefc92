// Fair share on the bed (docs/dev/fair-share.md): an organization guaranteed one of the fleet's two H100s
// lets Bob borrow both while nobody needs them; when Alice's guaranteed session waits, the reclaim loop
// (its passes in the test's hand, with a 0-second grace) warns the newest borrowed session's owner
// (notification, Kubernetes Event, stream event, reclaim log), pauses it through the pause path, and
// queues its resume ahead of Bob's newer borrowed work. Alice's guaranteed session is never reclaimed.
import { capacityReclaimWorkerLoop } from "@berth/api";
import { HttpKube } from "@berth/controllers/kube";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import { H100, type SessionsBed, startSessionsBed } from "./harness.ts";

vi.setConfig({ testTimeout: 600_000 });

let bed: SessionsBed;
let kube: HttpKube;
beforeAll(async () => {
  bed = await startSessionsBed({ workerCapacityReclaim: false });
  kube = new HttpKube(bed.workerKubeConfig, { userAgent: "berth-worker" });
});
afterAll(async () => {
  kube?.close();
  await bed?.stop();
});

const h100 = { offering: "h100", preset: "gpu-small", image: "jupyterlab" };

describe("borrowed capacity is given back to guaranteed sessions by pausing", () => {
  it("warns, pauses after a 0-second grace, lets the guaranteed session start, and resumes the borrowed one ahead of new work", async () => {
    await bed.writeOrganizationPolicy("bed-fair-share", {
      fairShare: {
        guarantees: [{ gpuModel: H100, gpus: 1, borrowingLimit: 3 }],
        reclaimGraceSeconds: 0,
        minRuntimeSeconds: 0,
      },
    });
    const loop = capacityReclaimWorkerLoop({ db: bed.workerDb, kube, log: bed.t.deps.log });
    // A pass acts on what it reads: one that reads before a change reached it, or whose write meets a session
    // changed since its read (409), leaves that session to the next pass, as the loop's period does in
    // production (seen: a resume recorded one pass late). The test runs passes until one acts, then asserts
    // what it did.
    type Step = "warned" | "paused" | "requeued" | "resumed";
    const passUntil = async (step: Step) => {
      for (let i = 0; ; i++) {
        const r = await loop.pass();
        if (r[step].length > 0 || i === 20) return r;
        await new Promise((done) => setTimeout(done, 200));
      }
    };

    // Bob borrows both H100s: nobody needs them now.
    const b1 = await bed.startRunning(bed.bob, { ...h100, name: "b1", capacity_class: "borrowed" });
    const b2 = await bed.startRunning(bed.bob, { ...h100, name: "b2", capacity_class: "borrowed" });
    expect([b1.capacity_class, b2.capacity_class]).toEqual(["borrowed", "borrowed"]);
    expect((await loop.pass()).warned).toEqual([]);

    // Alice's guaranteed session is within the organization's guarantee and waits for a GPU.
    const g = await bedApi(bed, bed.alice).call("createSession", { body: { ...h100, name: "g" } });
    expect(g.capacity_class).toBe("guaranteed");
    await bed.waitFor(bed.alice, g.id, (s) => s.phase === "Queued", "guaranteed session Queued");

    // One pass warns the newest borrowed session (both are active), for Alice's.
    const warned = await passUntil("warned");
    expect(warned.warned).toEqual([{ session: b2.id, for: g.id }]);
    const notice = (await bedApi(bed, bed.bob).call("getSession", { params: { sessionId: b2.id } })).reclaim_notice;
    expect(notice?.pending).toMatchObject({ for_session_id: g.id, paused_at: null });
    // The owner reads who needs the GPU by the organization's name, not its id.
    const needing = await bed.t.database.db("organizations").where({ id: g.organization_id }).first("name");
    expect(notice?.pending?.reason).toContain(`A guaranteed session of ${needing.name} needs ${H100}`);
    expect(notice?.pending?.reason).not.toContain(g.organization_id);
    const bell = await bedApi(bed, bed.bob).call("listNotifications", { query: { kind: "session.reclaim_warning" } });
    expect(bell.data).toEqual([expect.objectContaining({ data: expect.objectContaining({ session_id: b2.id }) })]);
    const events = await bedApi(bed, bed.orgAdmin).call("listSessionResourceEvents", { params: { sessionId: b2.id } });
    expect(JSON.stringify(events)).toContain("CapacityReclaimWarning");
    const streamed = await bed.t.database
      .db("session_events")
      .where({ session_id: b2.id, type: "session.reclaim_warning" });
    expect(streamed).toHaveLength(1);

    // The grace is 0: the next pass pauses it through the pause path; Alice's session gets the GPU.
    expect((await passUntil("paused")).paused).toEqual([b2.id]);
    const paused = await bed.waitFor(bed.bob, b2.id, (s) => s.phase === "Paused", "borrowed session Paused");
    expect(paused.reason).toBe("CapacityReclaimed");
    await bed.waitFor(bed.alice, g.id, (s) => s.phase === "Running", "guaranteed session Running");

    // Its resume is queued (the pass after the pause lands); a newer borrowed session waits behind it.
    expect((await passUntil("requeued")).requeued).toEqual([b2.id]);
    await bed.waitFor(bed.bob, b2.id, (s) => s.phase === "Queued", "reclaimed session Queued to resume");
    const b3 = await bedApi(bed, bed.bob).call("createSession", {
      body: { ...h100, name: "b3", capacity_class: "borrowed" },
    });
    // Placement's own order: the reclaimed session first (it waits from its first start), the newer second.
    await bed.waitFor(bed.bob, b3.id, (s) => s.queue?.position === 2, "newer borrowed session second");
    expect((await bedApi(bed, bed.bob).call("getSession", { params: { sessionId: b2.id } })).queue?.position).toBe(1);

    // A GPU frees up: the reclaimed session resumes, not the newer one.
    // Answered means accepted: the contract gives terminate one success, 202 (api/openapi.json).
    await bedApi(bed, bed.bob).call("terminateSession", { params: { sessionId: b1.id } });
    await bed.waitFor(bed.bob, b2.id, (s) => s.phase === "Running", "reclaimed session Running again");
    expect((await bedApi(bed, bed.bob).call("getSession", { params: { sessionId: b3.id } })).phase).toBe("Queued");
    expect((await passUntil("resumed")).resumed).toEqual([b2.id]);
    expect(
      (await bedApi(bed, bed.bob).call("getSession", { params: { sessionId: b2.id } })).reclaim_notice?.pending,
    ).toBeNull();

    // The reclaim log names who reclaimed what and why, start to end.
    const log = await bed.t.database.db("capacity_reclaims").where({ session_id: b2.id });
    expect(log).toEqual([
      expect.objectContaining({
        for_session_id: g.id,
        gpu_model: H100,
        paused_at: expect.any(Date),
        resumed_at: expect.any(Date),
        withdrawn_at: null,
      }),
    ]);
    // The guaranteed session was never chosen, whatever waited.
    for (let i = 0; i < 3; i++) expect((await loop.pass()).warned).toEqual([]);
    expect(await bed.t.database.db("capacity_reclaims").where({ session_id: g.id })).toEqual([]);
    expect(await bedApi(bed, bed.alice).call("getSession", { params: { sessionId: g.id } })).toMatchObject({
      phase: "Running",
      reclaim_notice: null,
    });
  });
});
