// A reclaimed borrowed session asks to run again through the same gate as its owner's resume
// (docs/dev/fair-share.md, api/src/domain/sessions/resumeForSystem.ts). On the bed: Bob's newest borrowed
// H100 session is reclaimed for Alice's guaranteed one and paused; the organization's credits are then set
// aside, so Bob's own resume is refused with quota_exceeded (credits). The reclaim pass's resume is refused
// the same way: the session stays paused and Bob is told once, in the same words; after a top-up the next
// pass asks it to run again.
import { capacityReclaimWorkerLoop } from "@berth/api";
import { ApiError } from "@berth/console/client";
import { HttpKube } from "@berth/controllers/kube";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { apiAs, bedApi, refusalOf } from "../api-client.ts";
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
    const g = await bedApi(bed, bed.alice).call("createSession", { body: { ...h100, name: "g" } });
    await bed.waitFor(bed.alice, g.id, (s) => s.phase === "Queued", "guaranteed session Queued");
    expect((await loop.pass()).warned).toEqual([{ session: b2.id, for: g.id }]);
    expect((await loop.pass()).paused).toEqual([b2.id]);
    await bed.waitFor(bed.bob, b2.id, (s) => s.phase === "Paused", "borrowed session Paused");

    // The organization's administrator sets its credits aside in a project wallet nobody here draws on.
    const admin = bedApi(bed, bed.orgAdmin);
    const [orgWallet] = (
      await admin.call("listWallets", { query: { organization: bed.org.id, owner_kind: "organization" } })
    ).data;
    if (!orgWallet) throw new Error("the organization has no wallet");
    const reserveProject = await bed.t.aProject(bed.org.id, "Reserve");
    // Opening answers 200 for a wallet already there: this one must be new (201).
    let opened = 0;
    const reserve = await apiAs(bed.t.api.url, bed.orgAdmin.token, (res) => {
      opened = res.status;
    }).call("openWallet", {
      body: { organization_id: bed.org.id, owner_kind: "project", owner_id: reserveProject.id },
    });
    expect(opened, JSON.stringify(reserve)).toBe(201);
    // All but a fifth of a credit, far below a minimum run of an H100. The running sessions' charges may
    // land between reading a balance and moving it (409 insufficient_credits): read it again then.
    const moveAll = async (from: string, to: string, keep: bigint) => {
      for (let attempt = 0; ; attempt++) {
        const w = await admin.call("getWallet", { params: { walletId: from } });
        const moved = await admin
          .call("allocateCredits", {
            body: {
              from_wallet_id: from,
              to_wallet_id: to,
              amount: (BigInt(w.balance) - keep).toString(),
              reason: "set aside",
            },
          })
          .catch((e: unknown) => {
            if (e instanceof ApiError && e.status === 409 && attempt < 5) return undefined;
            throw e;
          });
        if (moved) return;
      }
    };
    await moveAll(orgWallet.id, reserve.id, 200_000n);

    // Bob's own resume is refused: the wallets cannot cover a minimum run.
    const own = await refusalOf(bedApi(bed, bed.bob).call("resumeSession", { params: { sessionId: b2.id } }));
    expect(own.status, own.message).toBe(403);
    expect(own).toMatchObject({ code: "quota_exceeded", details: { limit: "credits" } });

    // The reclaim pass's resume meets the same gate: not asked to run, still paused, Bob told why, once.
    expect((await loop.pass()).requeued).toEqual([]);
    expect((await loop.pass()).requeued).toEqual([]);
    const s = await bedApi(bed, bed.bob).call("getSession", { params: { sessionId: b2.id } });
    expect(s).toMatchObject({ phase: "Paused", desired_state: "Paused" });
    const told = (await bedApi(bed, bed.bob).call("listNotifications", { query: { kind: "session.resume_refused" } }))
      .data;
    expect(told).toHaveLength(1);
    expect(told[0]?.data).toMatchObject({
      session_id: b2.id,
      refusal: { code: "quota_exceeded", limit: "credits", message: own.message },
    });
    expect(told[0]?.body).toContain(own.message);

    // Credits back: the next pass asks it to run again (it waits behind Alice's guaranteed session).
    await moveAll(reserve.id, orgWallet.id, 0n);
    expect((await loop.pass()).requeued).toEqual([b2.id]);
    await bed.waitFor(bed.bob, b2.id, (x) => x.desired_state === "Running", "reclaimed session asked to run again");
  });
});
