import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { upsertBudget } from "../db/operations/ledger/budgets.ts";
import { createTestDatabase, type TestDatabase } from "../db/testing.ts";
import { billPendingUsage } from "./charge.ts";
import { assessStart, checkCreditsAtDoor } from "./door.ts";
import {
  anOrganizationWallet,
  aSession,
  aWallet,
  CREDIT,
  expectLedgerInvariants,
  grant,
  TEST_OFFERINGS,
  testBilling,
  usage,
} from "./testing.ts";

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterEach(async () => {
  await expectLedgerInvariants(tdb.db);
});
afterAll(async () => {
  await tdb?.drop();
});

const h100 = TEST_OFFERINGS.h100 as NonNullable<(typeof TEST_OFFERINGS)["h100"]>;

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
