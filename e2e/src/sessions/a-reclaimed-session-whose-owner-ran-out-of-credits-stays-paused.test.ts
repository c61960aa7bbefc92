// biome-ignore-all lint/suspicious/noExplicitAny: journeys read the API's JSON as it comes
// A reclaimed borrowed session asks to run again through the same gate as its owner's resume
// (docs/dev/fair-share.md, api/src/domain/sessions/resumeForSystem.ts). On the bed: Bob's newest borrowed
// H100 session is reclaimed for Alice's guaranteed one and paused; the organization's credits are then set
// aside, so Bob's own resume is refused with quota_exceeded (credits). The reclaim pass's resume is refused
// the same way: the session stays paused and Bob is told once, in the same words; after a top-up the next
// pass asks it to run again.
import { capacityReclaimWorkerLoop } from "@berth/api";
import { HttpKube } from "@berth/controllers/kube";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
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

describe("a reclaimed session's resume", () => {
  it("is refused when its owner's credits cannot cover a minimum run, as the owner's own resume is, and says why", async () => {
    await bed.writeOrganizationPolicy("bed-fair-share-credits", {
      fairShare: {
        guarantees: [{ gpuModel: H100, gpus: 1, borrowingLimit: 3 }],
        reclaimGraceSeconds: 0,
        minRuntimeSeconds: 0,
      },
    });
    const loop = capacityReclaimWorkerLoop({ db: bed.workerDb, kube, log: bed.t.deps.log });

    // Bob borrows both H100s; Alice's guaranteed session waits; Bob's newest is reclaimed and paused.
    await bed.startRunning(bed.bob, { ...h100, name: "b1", capacity_class: "borrowed" });
    const b2 = await bed.startRunning(bed.bob, { ...h100, name: "b2", capacity_class: "borrowed" });
    const g = await bed.call(bed.alice, "POST", "/api/v1/sessions", { ...h100, name: "g" });
    expect(g.status, JSON.stringify(g.body)).toBe(201);
    await bed.waitFor(bed.alice, g.body.id, (s) => s.phase === "Queued", "guaranteed session Queued");
    expect((await loop.pass()).warned).toEqual([{ session: b2.id, for: g.body.id }]);
    expect((await loop.pass()).paused).toEqual([b2.id]);
    await bed.waitFor(bed.bob, b2.id, (s) => s.phase === "Paused", "borrowed session Paused");

    // The organization's administrator sets its credits aside in a project wallet nobody here draws on.
    const orgWallet = (
      await bed.call(bed.orgAdmin, "GET", `/api/v1/credits/wallets?organization=${bed.org.id}&owner_kind=organization`)
    ).body.data[0];
    const reserveProject = await bed.t.aProject(bed.org.id, "Reserve");
    const reserve = await bed.call(bed.orgAdmin, "POST", "/api/v1/credits/wallets", {
      organization_id: bed.org.id,
      owner_kind: "project",
      owner_id: reserveProject.id,
    });
    expect(reserve.status, JSON.stringify(reserve.body)).toBe(201);
    // All but a fifth of a credit, far below a minimum run of an H100. The running sessions' charges may
    // land between reading a balance and moving it (409 insufficient_credits): read it again then.
    const moveAll = async (from: string, to: string, keep: bigint) => {
      for (let attempt = 0; ; attempt++) {
        const w = (await bed.call(bed.orgAdmin, "GET", `/api/v1/credits/wallets/${from}`)).body;
        const r = await bed.call(bed.orgAdmin, "POST", "/api/v1/credits/allocations", {
          from_wallet_id: from,
          to_wallet_id: to,
          amount: (BigInt(w.balance) - keep).toString(),
          reason: "set aside",
        });
        if (r.status === 409 && attempt < 5) continue;
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        return;
      }
    };
    await moveAll(orgWallet.id, reserve.body.id, 200_000n);

    // Bob's own resume is refused: the wallets cannot cover a minimum run.
    const own = await bed.call(bed.bob, "POST", `/api/v1/sessions/${b2.id}/resume`);
    expect(own.status, JSON.stringify(own.body)).toBe(403);
    expect(own.body.error).toMatchObject({ code: "quota_exceeded", details: { limit: "credits" } });

    // The reclaim pass's resume meets the same gate: not asked to run, still paused, Bob told why, once.
    expect((await loop.pass()).requeued).toEqual([]);
    expect((await loop.pass()).requeued).toEqual([]);
    const s = (await bed.call(bed.bob, "GET", `/api/v1/sessions/${b2.id}`)).body;
    expect(s).toMatchObject({ phase: "Paused", desired_state: "Paused" });
    const told = (await bed.call(bed.bob, "GET", "/api/v1/notifications?kind=session.resume_refused")).body.data;
    expect(told).toHaveLength(1);
    expect(told[0].data).toMatchObject({
      session_id: b2.id,
      refusal: { code: "quota_exceeded", limit: "credits", message: own.body.error.message },
    });
    expect(told[0].body).toContain(own.body.error.message);

    // Credits back: the next pass asks it to run again (it waits behind Alice's guaranteed session).
    await moveAll(reserve.body.id, orgWallet.id, 0n);
    expect((await loop.pass()).requeued).toEqual([b2.id]);
    await bed.waitFor(bed.bob, b2.id, (x) => x.desired_state === "Running", "reclaimed session asked to run again");
  });
});
