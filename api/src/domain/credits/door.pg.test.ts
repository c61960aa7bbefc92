import { setTimeout as sleep } from "node:timers/promises";
import type { Knex } from "knex";
import { describe, expect, it } from "vitest";
import { upsertBudget } from "../../db/operations/ledger/budgets.ts";
import { updateWalletLimits } from "../../db/operations/ledger/updateWalletLimits.ts";
import { lockOrganizationDoor } from "../../db/operations/sessions/lockOrganization.ts";
import { billPendingUsage } from "./charge.ts";
import type { CreditsContext } from "./context.ts";
import {
  anOrganizationWallet,
  aSession,
  aWallet,
  CREDIT,
  grant,
  TEST_OFFERINGS,
  testBilling,
  usage,
  useLedgerDatabase,
} from "./credits.test-support.ts";
import { assessStart, type DoorRequest } from "./door.ts";

const tdb = useLedgerDatabase();

const h100 = TEST_OFFERINGS.h100 as NonNullable<(typeof TEST_OFFERINGS)["h100"]>;
// Ten minutes of h100 (4 credits/h), rounded up: the minimum run.
const TEN_MINUTES = 666_667n;

// The door as admission passes it: under the organization's door lock, refusing with the answer's
// QuotaExceeded.
const checkCreditsAtDoor = (b: CreditsContext, db: Knex, req: DoorRequest): Promise<void> => {
  const run = async (tx: Knex.Transaction) => {
    await lockOrganizationDoor(tx, req.organizationId);
    const a = await assessStart(b, tx, req);
    if (a.refusal) throw a.refusal;
  };
  return (db as Knex.Transaction).isTransaction ? run(db as Knex.Transaction) : db.transaction(run);
};

const at = (req: Omit<DoorRequest, "offering" | "gpuCount">): DoorRequest => ({ ...req, offering: h100, gpuCount: 1 });

describe("credits at the door", () => {
  it("refuses a session whose wallets cannot pay for ten minutes, saying which limit, what is there and what is needed", async () => {
    const { b } = testBilling(tdb.db);
    // Ten minutes of h100 (4 credits/h) = 666,667 units (rounded up).
    const org = await anOrganizationWallet(tdb.db, 666_666n);
    const refusal = await checkCreditsAtDoor(b, tdb.db, {
      ownerId: "usr_x",
      organizationId: org.id,
      projectId: null,
      offering: h100,
      gpuCount: 1,
    }).catch((e) => e);
    expect(refusal).toMatchObject({
      code: "quota_exceeded",
      details: { limit: "credits", value: "666666", required: "666667", minimum_run_seconds: 600 },
    });
  });

  it("lets a session in when its wallets together cover the minimum run", async () => {
    const { b } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, 400_000n);
    const user = await aWallet(tdb.db, org.id, "user", "usr_door");
    await grant(tdb.db, user.id, 266_667n);
    await expect(
      checkCreditsAtDoor(b, tdb.db, {
        ownerId: "usr_door",
        organizationId: org.id,
        projectId: null,
        offering: h100,
        gpuCount: 1,
      }),
    ).resolves.toBeUndefined();
  });

  it("does not count another organization's credits", async () => {
    const { b } = testBilling(tdb.db);
    await anOrganizationWallet(tdb.db, 100n * CREDIT);
    const poor = await anOrganizationWallet(tdb.db, 0n);
    const a = await assessStart(b, tdb.db, {
      ownerId: "usr_x",
      organizationId: poor.id,
      projectId: null,
      offering: h100,
      gpuCount: 1,
    });
    expect(a.canStart).toBe(false);
    expect(a.available).toBe(0n);
  });

  it("refuses a session when the organization's budget for the period has less left than the minimum run", async () => {
    const { b, clock } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, 100n * CREDIT);
    await upsertBudget(tdb.db, {
      organizationId: org.id,
      period: "monthly",
      amount: 2n * CREDIT,
      by: "usr_admin",
      at: clock.now(),
    });
    const s = await aSession(tdb.db, { ownerId: "usr_x", organizationId: org.id, offering: "h100" });
    // Half an hour of h100 = 2 credits: the month's budget is spent.
    await usage(tdb.db, "clu_a", [
      { id: "smp-budget", session: s.id, start: new Date("2026-11-22T11:00:00Z"), seconds: 1800 },
    ]);
    await billPendingUsage(b);
    const refusal = await checkCreditsAtDoor(b, tdb.db, {
      ownerId: "usr_x",
      organizationId: org.id,
      projectId: null,
      offering: h100,
      gpuCount: 1,
    }).catch((e) => e);
    expect(refusal).toMatchObject({
      code: "quota_exceeded",
      details: {
        limit: "organizationBudget",
        value: "2000000",
        spent: "2000000",
        required: "666667",
        period: "monthly",
        period_start: "2026-11-01T00:00:00.000Z",
      },
    });
    // Next month the budget is whole again.
    clock.advance(10 * 86_400);
    await expect(
      checkCreditsAtDoor(b, tdb.db, {
        ownerId: "usr_x",
        organizationId: org.id,
        projectId: null,
        offering: h100,
        gpuCount: 1,
      }),
    ).resolves.toBeUndefined();
  });
});

describe("credits at the door count the minimum runs already promised", () => {
  it("owes the organization's sessions already let in their minimum run before a new one, whoever owns them", async () => {
    const { b } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, TEN_MINUTES + TEN_MINUTES / 2n);
    await aSession(tdb.db, { ownerId: "usr_first", organizationId: org.id, offering: "h100" });
    const refusal = await checkCreditsAtDoor(
      b,
      tdb.db,
      at({ ownerId: "usr_second", organizationId: org.id, projectId: null }),
    ).catch((e) => e);
    expect(refusal).toMatchObject({
      code: "quota_exceeded",
      details: {
        limit: "credits",
        value: (TEN_MINUTES + TEN_MINUTES / 2n).toString(),
        reserved: TEN_MINUTES.toString(),
        required: TEN_MINUTES.toString(),
        sessions_let_in: 1,
        wallets: [{ id: org.wallet.id, owner_kind: "organization", reserved: TEN_MINUTES.toString() }],
      },
    });
  });

  it("counts queued sessions and resumes on their way, but not paused or ended ones nor the session being resumed", async () => {
    const { b } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, TEN_MINUTES);
    const resumed = await aSession(tdb.db, {
      ownerId: "usr_r",
      organizationId: org.id,
      offering: "h100",
      phase: "Paused",
    });
    await tdb.db("sessions").where({ id: resumed.id }).update({ desired_state: "Paused" });
    const paused = await aSession(tdb.db, {
      ownerId: "usr_r",
      organizationId: org.id,
      offering: "h100",
      phase: "Paused",
    });
    await tdb.db("sessions").where({ id: paused.id }).update({ desired_state: "Paused" });
    await aSession(tdb.db, { ownerId: "usr_r", organizationId: org.id, offering: "h100", phase: "Terminated" });
    await aSession(tdb.db, { ownerId: "usr_r", organizationId: org.id, offering: "h100", phase: "Failed" });
    const req = at({ ownerId: "usr_r", organizationId: org.id, projectId: null, sessionId: resumed.id });
    expect((await assessStart(b, tdb.db, req)).reserved).toBe(0n);
    await expect(checkCreditsAtDoor(b, tdb.db, req)).resolves.toBeUndefined();

    // The resume writes its intent (desired Running) while the session is still Paused: it is owed its run.
    await tdb.db("sessions").where({ id: resumed.id }).update({ desired_state: "Running" });
    await aSession(tdb.db, { ownerId: "usr_q", organizationId: org.id, offering: "l4", phase: "Queued" });
    const a = await assessStart(b, tdb.db, at({ ownerId: "usr_new", organizationId: org.id, projectId: null }));
    expect(a).toMatchObject({ canStart: false, available: TEN_MINUTES, reserved: TEN_MINUTES });
  });

  it("takes another person's promise from the shared wallets only after their own wallet", async () => {
    const { b } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, TEN_MINUTES);
    const rich = await aWallet(tdb.db, org.id, "user", "usr_rich");
    await grant(tdb.db, rich.id, 100n * CREDIT);
    await aSession(tdb.db, { ownerId: "usr_rich", organizationId: org.id, offering: "h100" });
    const a = await assessStart(b, tdb.db, at({ ownerId: "usr_poor", organizationId: org.id, projectId: null }));
    expect(a).toMatchObject({ canStart: true, available: TEN_MINUTES, reserved: 0n });
  });

  it("lets exactly one of two sessions started together on a thin shared wallet pass, for two different people", async () => {
    const { b } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, TEN_MINUTES + TEN_MINUTES / 2n);
    // What createSession does: the door, then the session row, in one transaction; the second arrives
    // while the first still holds its transaction open. Each transaction's span, from its first statement
    // to just before it ends, must overlap the other's, or the second merely ran after the first and
    // proves nothing. So the order is made, not hoped for from delays (a loaded machine stretches those):
    // the second begins once the first has passed the door, and the first ends only after the second began.
    const spans = [
      { begin: Number.NaN, end: Number.NaN },
      { begin: Number.NaN, end: Number.NaN },
    ];
    let firstPassed: () => void = () => {};
    const passed = new Promise<void>((resolve) => {
      firstPassed = resolve;
    });
    const secondBegun = async () => {
      for (const deadline = Date.now() + 10_000; Number.isNaN(spans[1]?.begin); await sleep(10))
        if (Date.now() > deadline) throw new Error("the second transaction did not begin within 10 s");
      // Time for the second to reach the door while the first still holds its transaction.
      await sleep(100);
    };
    const create = (owner: string, span: { begin: number; end: number }, hold?: () => Promise<void>) =>
      tdb.db
        .transaction(async (tx) => {
          await tx.raw("SELECT 1");
          span.begin = performance.now();
          await checkCreditsAtDoor(b, tx, at({ ownerId: owner, organizationId: org.id, projectId: null }));
          await aSession(tx, { ownerId: owner, organizationId: org.id, offering: "h100" });
          if (hold) {
            firstPassed();
            await hold();
          }
        })
        .finally(() => {
          span.end = performance.now();
          firstPassed(); // a first refused at the door lets the second go too
        });
    const [s0, s1] = spans as [{ begin: number; end: number }, { begin: number; end: number }];
    const results = await Promise.allSettled([
      create("usr_a", s0, secondBegun),
      passed.then(() => create("usr_b", s1)),
    ]);
    expect(spans).toHaveLength(2);
    const [first, second] = spans as [{ begin: number; end: number }, { begin: number; end: number }];
    expect(Math.max(first.begin, second.begin), "both transactions were open at once").toBeLessThan(
      Math.min(first.end, second.end),
    );
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    const refused = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({
      code: "quota_exceeded",
      details: { limit: "credits", reserved: TEN_MINUTES.toString() },
    });
    expect(await tdb.db("sessions").where({ organization_id: org.id })).toHaveLength(1);
  });

  it("counts the others' promises against the organization's budget too", async () => {
    const { b, clock } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, 100n * CREDIT);
    await upsertBudget(tdb.db, {
      organizationId: org.id,
      period: "daily",
      amount: TEN_MINUTES + 1n,
      by: "usr_admin",
      at: clock.now(),
    });
    await aSession(tdb.db, { ownerId: "usr_a", organizationId: org.id, offering: "h100" });
    const refusal = await checkCreditsAtDoor(
      b,
      tdb.db,
      at({ ownerId: "usr_b", organizationId: org.id, projectId: null }),
    ).catch((e) => e);
    expect(refusal).toMatchObject({
      code: "quota_exceeded",
      details: {
        limit: "organizationBudget",
        value: (TEN_MINUTES + 1n).toString(),
        spent: "0",
        reserved: TEN_MINUTES.toString(),
      },
    });
  });
});

describe("credits at the door respect the wallets' spend limits", () => {
  /** A user wallet rich in credits whose limit is reached today: one hour of h100 = 4 credits charged. */
  async function spentToday(limits: { maxSpendPerDay?: bigint; maxSpendPerMonth?: bigint }, orgCredits: bigint) {
    const { b, clock } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, orgCredits);
    const user = await aWallet(tdb.db, org.id, "user", `usr_lim_${org.id}`);
    await grant(tdb.db, user.id, 100n * CREDIT);
    const s = await aSession(tdb.db, {
      ownerId: user.owner_id,
      organizationId: org.id,
      offering: "h100",
      phase: "Paused",
    });
    await tdb.db("sessions").where({ id: s.id }).update({ desired_state: "Paused" });
    await updateWalletLimits(tdb.db, user.id, limits, clock.now());
    await usage(tdb.db, "clu_a", [
      { id: `smp-${s.id}`, session: s.id, start: new Date("2026-11-22T10:00:00Z"), seconds: 3600 },
    ]);
    await billPendingUsage(b);
    return { b, clock, org, user };
  }

  it("refuses when the owner's wallet has credits but its daily limit is spent and no other wallet can pay, naming the limit", async () => {
    const { b, org, user } = await spentToday({ maxSpendPerDay: 4n * CREDIT }, 0n);
    const refusal = await checkCreditsAtDoor(
      b,
      tdb.db,
      at({ ownerId: user.owner_id, organizationId: org.id, projectId: null }),
    ).catch((e) => e);
    expect(refusal).toMatchObject({
      code: "quota_exceeded",
      details: {
        limit: "maxSpendPerDay",
        value: "4000000",
        spent: "4000000",
        reserved: "0",
        required: TEN_MINUTES.toString(),
        available: "0",
        wallet_id: user.id,
        owner_kind: "user",
        period: "daily",
        period_start: "2026-11-22T00:00:00.000Z",
        resets_at: "2026-11-23T00:00:00.000Z",
      },
    });
  });

  it("lets the session in when the next wallet in draw order can pay", async () => {
    const { b, org, user } = await spentToday({ maxSpendPerDay: 4n * CREDIT }, TEN_MINUTES);
    await expect(
      checkCreditsAtDoor(b, tdb.db, at({ ownerId: user.owner_id, organizationId: org.id, projectId: null })),
    ).resolves.toBeUndefined();
  });

  it("lets the session in the next day, when the daily limit starts again", async () => {
    const { b, clock, org, user } = await spentToday({ maxSpendPerDay: 4n * CREDIT }, 0n);
    clock.advance(86_400);
    await expect(
      checkCreditsAtDoor(b, tdb.db, at({ ownerId: user.owner_id, organizationId: org.id, projectId: null })),
    ).resolves.toBeUndefined();
  });

  it("names the tighter of the daily and monthly limits", async () => {
    const { b, org, user } = await spentToday(
      { maxSpendPerDay: 10n * CREDIT, maxSpendPerMonth: 4n * CREDIT + TEN_MINUTES - 1n },
      0n,
    );
    const refusal = await checkCreditsAtDoor(
      b,
      tdb.db,
      at({ ownerId: user.owner_id, organizationId: org.id, projectId: null }),
    ).catch((e) => e);
    expect(refusal).toMatchObject({
      code: "quota_exceeded",
      details: {
        limit: "maxSpendPerMonth",
        value: (4n * CREDIT + TEN_MINUTES - 1n).toString(),
        spent: "4000000",
        available: (TEN_MINUTES - 1n).toString(),
        period: "monthly",
        period_start: "2026-11-01T00:00:00.000Z",
        resets_at: "2026-12-01T00:00:00.000Z",
      },
    });
  });
});
