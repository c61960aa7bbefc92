// A borrowed session (docs/dev/fair-share.md) pays its offering's borrowed share of the rate, and the
// ledger says which rate applied; a guaranteed one pays the full rate.
import { describe, expect, it } from "vitest";
import { billPendingUsage } from "./charge.ts";
import {
  anOrganizationWallet,
  aSession,
  CREDIT,
  testBilling,
  usage,
  useLedgerDatabase,
} from "./credits.test-support.ts";

const tdb = useLedgerDatabase();
const t0 = new Date("2026-11-22T10:00:00Z");

describe("charging borrowed capacity", () => {
  it("charges a borrowed hour at 0.3 of the rate and a guaranteed hour in full, naming the class in the ledger", async () => {
    const { b } = testBilling(tdb.db, {
      offerings: { h100: { hourlyCreditRate: "4000000", gpuCount: 1, borrowedRatePermille: 300 } },
    });
    const org = await anOrganizationWallet(tdb.db, 100n * CREDIT);
    const guaranteed = await aSession(tdb.db, { ownerId: "usr_g", organizationId: org.id, offering: "h100" });
    const borrowed = await aSession(tdb.db, { ownerId: "usr_b", organizationId: org.id, offering: "h100" });
    await tdb.db("sessions").where({ id: borrowed.id }).update({ capacity_class: "borrowed", rate_permille: 300 });
    await usage(tdb.db, "clu_a", [
      { id: "g-1", session: guaranteed.id, start: t0, seconds: 3600 },
      { id: "b-1", session: borrowed.id, start: t0, seconds: 3600 },
    ]);
    expect((await billPendingUsage(b)).charged).toBe(4n * CREDIT + 1_200_000n);
    const rows = await tdb
      .db("ledger_transactions")
      .whereIn("session_id", [guaranteed.id, borrowed.id])
      .select("session_id", "amount", "metadata");
    const of = (id: string) => rows.find((r) => r.session_id === id);
    expect(of(guaranteed.id)?.metadata).toMatchObject({ rate_class: "guaranteed" });
    expect(of(guaranteed.id)?.metadata.rate_multiplier).toBeUndefined();
    expect(of(borrowed.id)?.metadata).toMatchObject({ rate_class: "borrowed", rate_multiplier: "0.3" });
  });

  it("charges a borrowed session the share it was created with once its offering is gone", async () => {
    const { b } = testBilling(tdb.db, { offerings: {} });
    const org = await anOrganizationWallet(tdb.db, 100n * CREDIT);
    const s = await aSession(tdb.db, { ownerId: "usr_gone", organizationId: org.id, offering: "h100" });
    await tdb
      .db("sessions")
      .where({ id: s.id })
      .update({ capacity_class: "borrowed", rate_permille: 500, hourly_credit_rate: "4000000" });
    await usage(tdb.db, "clu_a", [{ id: "gone-1", session: s.id, start: t0, seconds: 1800 }]);
    // Half an hour at half of 4 credits an hour.
    expect((await billPendingUsage(b)).charged).toBe(1n * CREDIT);
  });
});
