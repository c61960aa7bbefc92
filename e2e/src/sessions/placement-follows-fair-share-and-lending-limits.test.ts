// Fair share inside the worker's placement pass (docs/dev/fair-share.md), on the bed: once a policy sets
// fair_share, the queue is ordered by planFairPass, so a person with less decayed usage starts before
// an earlier request of a heavier one; and a borrowed session starts only within what the lender lends,
// even while a GPU stands free (before, only the reclaim loop looked at lending limits).
import { grantToOrganization, type TestUser } from "@berth/api/testing";
import type { BodyOf } from "@berth/console/client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import { H100, type SessionsBed, startSessionsBed } from "./harness.ts";

vi.setConfig({ testTimeout: 600_000 });

let bed: SessionsBed;
let carol: TestUser;
beforeAll(async () => {
  // Usage read at every pass: the test's runs are seconds long and must count at once.
  bed = await startSessionsBed({ workerCapacityReclaim: false, workerFairShareUsageTtlMs: 0 });
  // A second organization that borrows Acme's H100s.
  const beta = await bed.t.anOrganization("Beta");
  await grantToOrganization(bed.t.database.db, {
    organizationId: beta.id,
    amount: 1_000_000_000n,
    actorKind: "system",
    actorId: null,
    reason: "test bed",
    at: new Date(),
  });
  carol = await bed.t.aUser();
  await bed.t.member(carol, beta.id, null, "member");
  await bed.writeOrganizationPolicy("acme-lends-one", {
    fairShare: { guarantees: [{ gpuModel: H100, gpus: 2, lendingLimit: 1 }] },
  });
});
afterAll(async () => {
  await bed?.stop();
});

const h100 = { offering: "h100", preset: "gpu-small", image: "jupyterlab" };
const l4 = { offering: "l4", preset: "gpu-small", image: "terminal" };

async function create(user: TestUser, body: BodyOf<"createSession">): Promise<string> {
  return (await bedApi(bed, user).call("createSession", { body })).id;
}

async function terminate(user: TestUser, id: string): Promise<void> {
  // Answered means accepted: the contract gives terminate one success, 202 (api/openapi.json).
  await bedApi(bed, user).call("terminateSession", { params: { sessionId: id } });
  await bed.waitFor(user, id, (s) => s.phase === "Terminated", `${id} Terminated`);
}

describe("the placement pass with fair share", () => {
  it("starts a borrowed session only within the lender's lending limit, though a GPU is free", async () => {
    // Acme is guaranteed both H100s and lends one: Carol's first borrowed session starts, her second waits.
    const c1 = await bed.startRunning(carol, { ...h100, name: "c1", capacity_class: "borrowed" });
    expect(c1.capacity_class).toBe("borrowed");
    const c2 = await create(carol, { ...h100, name: "c2", capacity_class: "borrowed" });
    const waiting = await bed.waitFor(carol, c2, (s) => s.phase === "Queued", "second borrowed session Queued");
    expect(waiting.queue.reason).toContain("nothing of");
    const free = await bed.t.database
      .db("sessions")
      .where({ gpu_model: H100 })
      .whereIn("phase", ["Running", "Starting"]);
    expect(free).toHaveLength(1); // one of the two H100s stands free and is not lent

    // The free GPU is Acme's: Alice's guaranteed session takes it, and the borrowed one still waits.
    await bed.startRunning(bed.alice, { ...h100, name: "g1" });
    expect((await bedApi(bed, carol).call("getSession", { params: { sessionId: c2 } })).phase).toBe("Queued");

    // Carol gives her first back: Acme lends one again, so the second starts.
    await terminate(carol, c1.id);
    await bed.waitFor(carol, c2, (s) => s.phase === "Running", "second borrowed session Running");
  });

  it("starts the request of the person with less decayed usage before an earlier one of a heavier user", async () => {
    // Alice fills both L4s (and ran an H100 above); Bob has run nothing.
    const a1 = await bed.startRunning(bed.alice, { ...l4, name: "a1" });
    await bed.startRunning(bed.alice, { ...l4, name: "a2" });
    const a3 = await create(bed.alice, { ...l4, name: "a3" });
    await bed.waitFor(bed.alice, a3, (s) => s.phase === "Queued", "Alice's third L4 Queued");
    const b1 = await create(bed.bob, { ...l4, name: "b1" });
    // Bob's later request is first in the queue, Alice's earlier one second.
    await bed.waitFor(bed.bob, b1, (s) => s.queue?.position === 1, "Bob's request first");
    await bed.waitFor(bed.alice, a3, (s) => s.queue?.position === 2, "Alice's request second");

    // An L4 frees up: it goes to Bob.
    await terminate(bed.alice, a1.id);
    await bed.waitFor(bed.bob, b1, (s) => s.phase === "Running", "Bob's session Running");
    expect((await bedApi(bed, bed.alice).call("getSession", { params: { sessionId: a3 } })).phase).toBe("Queued");
  });
});
