import { describe, expect, it } from "vitest";
import { upsertBudget } from "../../db/operations/ledger/budgets.ts";
import { updateWalletLimits } from "../../db/operations/ledger/updateWalletLimits.ts";
import {
  anOrganizationWallet,
  aSession,
  aWallet,
  grant,
  testBilling,
  useLedgerDatabase,
} from "./credits.test-support.ts";
import { watchRunningOut } from "./runningOut.ts";

const tdb = useLedgerDatabase();

// l4 = 800,000 units/h: the next minute costs 13,334 units, the next ten minutes 133,334.
const MINUTE = 13_334n;
const TEN_MINUTES = 133_334n;

/** Records pauses and does what the sessions domain and the worker would: the session stops. */
function recordingPauser() {
  const paused: string[] = [];
  return {
    paused,
    pause: async (id: string) => {
      paused.push(id);
      await tdb.db("sessions").where({ id }).update({ desired_state: "Paused", phase: "Paused" });
      return true;
    },
  };
}

const startedAt = (minutesAgo: number) => new Date(Date.parse("2026-11-22T12:00:00Z") - minutesAgo * 60_000);

describe("running out of credits", () => {
  it("warns the owner ten minutes ahead, once, with a notification and a session.credits_low event", async () => {
    const { b } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, TEN_MINUTES - 1n);
    const s = await aSession(tdb.db, { ownerId: "usr_warned", organizationId: org.id, offering: "l4" });
    const p = recordingPauser();
    expect(await watchRunningOut(b, p.pause)).toEqual({ warned: [s.id], paused: [] });
    expect(await watchRunningOut(b, p.pause)).toEqual({ warned: [], paused: [] });
    expect(p.paused).toEqual([]);
    const notes = await tdb.db("notifications").where({ user_id: "usr_warned" });
    expect(notes).toEqual([expect.objectContaining({ kind: "credits.running_low", organization_id: org.id })]);
    const events = await tdb.db("session_events").where({ session_id: s.id });
    expect(events).toEqual([expect.objectContaining({ type: "session.credits_low" })]);
    expect(events[0].payload.credits).toEqual({
      limit: "credits",
      available: (TEN_MINUTES - 1n).toString(),
      needed: TEN_MINUTES.toString(),
      seconds: 600,
    });
  });

  it("pauses a session its credits cannot cover for the next minute, and tells its owner", async () => {
    const { b } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, MINUTE - 1n);
    const s = await aSession(tdb.db, { ownerId: "usr_paused", organizationId: org.id, offering: "l4" });
    const p = recordingPauser();
    expect(await watchRunningOut(b, p.pause)).toEqual({ warned: [], paused: [s.id] });
    expect(p.paused).toEqual([s.id]);
    const notes = await tdb.db("notifications").where({ user_id: "usr_paused" });
    expect(notes.map((n: { kind: string }) => n.kind)).toEqual(["session.paused"]);
    expect((await tdb.db("session_events").where({ session_id: s.id })).map((e: { type: string }) => e.type)).toEqual([
      "session.credits_exhausted",
    ]);
  });

  it("leaves paused sessions alone and does not count them", async () => {
    const { b } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, 0n);
    await aSession(tdb.db, { ownerId: "usr_x", organizationId: org.id, offering: "l4", phase: "Paused" });
    await aSession(tdb.db, { ownerId: "usr_x", organizationId: org.id, offering: "l4", phase: "Queued" });
    const p = recordingPauser();
    const r = await watchRunningOut(b, p.pause);
    expect(p.paused).toEqual([]);
    expect(r.paused).toEqual([]);
  });

  it("pauses the newest session first when the credits cover only the oldest", async () => {
    const { b } = testBilling(tdb.db);
    // A minute of l4 (13,334) plus a minute of h100 (66,667) less one unit.
    const org = await anOrganizationWallet(tdb.db, MINUTE + 66_666n);
    const old = await aSession(tdb.db, { ownerId: "usr_two", organizationId: org.id, offering: "l4" });
    const young = await aSession(tdb.db, { ownerId: "usr_two", organizationId: org.id, offering: "h100" });
    await tdb
      .db("sessions")
      .where({ id: old.id })
      .update({ started_at: startedAt(60) });
    await tdb
      .db("sessions")
      .where({ id: young.id })
      .update({ started_at: startedAt(5) });
    const p = recordingPauser();
    const r = await watchRunningOut(b, p.pause);
    expect(r.paused).toEqual([young.id]);
    expect(r.warned).toEqual([old.id]);
  });

  it("pauses when the organization's budget will not cover the next minute, whatever the wallets hold", async () => {
    const { b, clock } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, 1_000n * MINUTE);
    await upsertBudget(tdb.db, {
      organizationId: org.id,
      period: "daily",
      amount: MINUTE - 1n,
      by: "usr_admin",
      at: clock.now(),
    });
    const s = await aSession(tdb.db, { ownerId: "usr_budget", organizationId: org.id, offering: "l4" });
    const p = recordingPauser();
    await watchRunningOut(b, p.pause);
    expect(p.paused).toEqual([s.id]);
    const [event] = await tdb.db("session_events").where({ session_id: s.id });
    expect(event.payload.credits.limit).toBe("organizationBudget");
  });

  it("warns again in a later episode once a top-up ended the first", async () => {
    const { b } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, TEN_MINUTES - 1n);
    const s = await aSession(tdb.db, { ownerId: "usr_episodes", organizationId: org.id, offering: "l4" });
    const p = recordingPauser();
    expect((await watchRunningOut(b, p.pause)).warned).toEqual([s.id]);
    await grant(tdb.db, org.wallet.id, 10n * TEN_MINUTES);
    expect((await watchRunningOut(b, p.pause)).warned).toEqual([]);
    expect(await tdb.db("billing_alerts").where({ session_id: s.id })).toEqual([]);
    // Use it up again (moved out to a project wallet): a new warning.
    await tdb.db.transaction(async (tx) => {
      const { transfer } = await import("./ledger.ts");
      await transfer(tx, {
        kind: "allocation",
        fromWalletId: org.wallet.id,
        toWalletId: (await aWallet(tx, org.id, "project", "prj_ep")).id,
        amount: 10n * TEN_MINUTES,
        actorKind: "system",
        actorId: null,
        at: new Date(),
      });
    });
    expect((await watchRunningOut(b, p.pause)).warned).toEqual([s.id]);
  });

  it("tries a pause that failed again on the next pass", async () => {
    const { b } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, 0n);
    const s = await aSession(tdb.db, { ownerId: "usr_retry", organizationId: org.id, offering: "l4" });
    let fail = true;
    const calls: string[] = [];
    const pause = async (id: string) => {
      calls.push(id);
      if (fail) throw new Error("the management cluster did not answer");
      await tdb.db("sessions").where({ id }).update({ desired_state: "Paused", phase: "Paused" });
      return true;
    };
    expect((await watchRunningOut(b, pause)).paused).toEqual([]);
    fail = false;
    expect((await watchRunningOut(b, pause)).paused).toEqual([s.id]);
    expect(calls).toEqual([s.id, s.id]);
  });
});

describe("running out within the wallets' spend limits", () => {
  /** A user whose own wallet is rich but limited per day, in an organization with no credits. */
  async function limited(owner: string, maxSpendPerDay: bigint) {
    const { b, clock } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, 0n);
    const user = await aWallet(tdb.db, org.id, "user", owner);
    await grant(tdb.db, user.id, 1_000n * MINUTE);
    await updateWalletLimits(tdb.db, user.id, { maxSpendPerDay }, clock.now());
    const s = await aSession(tdb.db, { ownerId: owner, organizationId: org.id, offering: "l4" });
    return { b, s };
  }

  it("pauses a session whose wallet holds credits but whose daily limit lets less than its next minute through", async () => {
    const { b, s } = await limited("usr_lim_pause", MINUTE - 1n);
    const p = recordingPauser();
    expect(await watchRunningOut(b, p.pause)).toEqual({ warned: [], paused: [s.id] });
    const [event] = await tdb.db("session_events").where({ session_id: s.id });
    expect(event.payload.credits).toEqual({
      limit: "maxSpendPerDay",
      available: (MINUTE - 1n).toString(),
      needed: MINUTE.toString(),
      seconds: 60,
    });
    const [note] = await tdb.db("notifications").where({ user_id: "usr_lim_pause" });
    expect(note.body).toContain("daily spend limit");
  });

  it("warns when the limit covers the next minute but not the next ten", async () => {
    const { b, s } = await limited("usr_lim_warn", TEN_MINUTES - 1n);
    const p = recordingPauser();
    expect(await watchRunningOut(b, p.pause)).toEqual({ warned: [s.id], paused: [] });
    const [event] = await tdb.db("session_events").where({ session_id: s.id });
    expect(event.payload.credits).toMatchObject({ limit: "maxSpendPerDay", available: (TEN_MINUTES - 1n).toString() });
  });
});
