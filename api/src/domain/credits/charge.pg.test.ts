import { describe, expect, it } from "vitest";
import { updateWalletLimits } from "../../db/operations/ledger/updateWalletLimits.ts";
import { billPendingUsage, priceInterval } from "./charge.ts";
import {
  anOrganizationWallet,
  aSession,
  aWallet,
  balanceOf,
  CREDIT,
  grant,
  testBilling,
  usage,
  useLedgerDatabase,
} from "./credits.test-support.ts";
import { SHORTFALL_WALLET } from "./ids.ts";

const tdb = useLedgerDatabase();
const t0 = new Date("2026-11-22T10:00:00Z");
const at = (s: number) => new Date(t0.getTime() + s * 1000);

describe("pricing an interval", () => {
  it("charges whole units and carries the fraction to the next interval", () => {
    // l4: 800,000 units/h = 222.2 units/s. Ten seconds: 2,222.2 units.
    const rate = { perHour: 800_000n, divisor: 1n };
    let c = { carry: 0n, divisor: 1n };
    const amounts: bigint[] = [];
    for (let i = 0; i < 5; i++) {
      const p = priceInterval(c, rate, 10_000n);
      amounts.push(p.amount);
      c = p;
    }
    // 2,222.2 four times leaves 0.8 carried; the fifth interval's 2,222.2 + 0.8 makes 2,223.
    expect(amounts).toEqual([2222n, 2222n, 2222n, 2222n, 2223n]);
    expect(amounts.reduce((a, x) => a + x, 0n)).toBe((800_000n * 50n) / 3600n);
  });

  it("loses no unit over a day of odd intervals", () => {
    const rate = { perHour: 7_000_000n * 3n, divisor: 2n }; // 3 GPUs on a 2-GPU offering at 7 credits/h
    let c = { carry: 0n, divisor: 2n };
    let total = 0n;
    let ms = 0n;
    for (let i = 0; i < 8640; i++) {
      const d = BigInt(9_000 + ((i * 7919) % 2_001)); // 9.0 to 11.0 s
      const p = priceInterval(c, rate, d);
      total += p.amount;
      ms += d;
      c = p;
    }
    const exactNumerator = rate.perHour * ms;
    expect(total).toBe(exactNumerator / (3_600_000n * 2n));
    expect(total * 3_600_000n * 2n + c.carry).toBe(exactNumerator);
  });
});

describe("charging usage", () => {
  it("charges a usage interval at the offering's hourly rate, once, however often it is delivered", async () => {
    const { b } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, 10n * CREDIT);
    const s = await aSession(tdb.db, { ownerId: "usr_1", organizationId: org.id, offering: "h100" });
    await usage(tdb.db, "clu_a", [{ id: "smp-1", session: s.id, start: at(0), seconds: 3600 }]);
    expect((await billPendingUsage(b)).charged).toBe(4n * CREDIT);
    await usage(tdb.db, "clu_a", [{ id: "smp-1", session: s.id, start: at(0), seconds: 3600 }]);
    expect((await billPendingUsage(b)).samples).toBe(0);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(6n * CREDIT);
  });

  it("charges the same sample id from two clusters as two intervals", async () => {
    const { b } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, 10n * CREDIT);
    const s = await aSession(tdb.db, { ownerId: "usr_1", organizationId: org.id, offering: "a100" });
    await usage(tdb.db, "clu_a", [{ id: "smp-x", session: s.id, start: at(0), seconds: 360 }]);
    await usage(tdb.db, "clu_b", [{ id: "smp-x", session: s.id, start: at(360), seconds: 360 }]);
    await billPendingUsage(b);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(10n * CREDIT - 500_000n);
  });

  it("charges a moment of a session's time once, whatever samples say it again", async () => {
    // An operator restarted with another interval length sends new ids for time already charged; a
    // former cluster reports a pod that outlived its move. The session held its GPUs once.
    const { b } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, 100n * CREDIT);
    const s = await aSession(tdb.db, { ownerId: "usr_1", organizationId: org.id, offering: "h100" });
    await usage(tdb.db, "clu_a", [{ id: "smp-60-0", session: s.id, start: at(0), seconds: 3600 }]);
    await billPendingUsage(b);
    await usage(tdb.db, "clu_a", [
      { id: "smp-30-0", session: s.id, start: at(1800), seconds: 3600 }, // half new
      { id: "smp-30-1", session: s.id, start: at(1800), seconds: 3600 }, // the same time, in this batch
    ]);
    await usage(tdb.db, "clu_b", [{ id: "smp-b-0", session: s.id, start: at(0), seconds: 900 }]); // none new
    expect((await billPendingUsage(b)).charged).toBe(2n * CREDIT);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(100n * CREDIT - 6n * CREDIT);
    const overlapped = await tdb
      .db("ledger_transactions")
      .where({ session_id: s.id, sample_id: "smp-30-0" })
      .first("metadata");
    expect(overlapped?.metadata).toMatchObject({ ms: "1800000", already_charged_ms: "1800000" });
    // Another session's same hour is its own.
    const other = await aSession(tdb.db, { ownerId: "usr_2", organizationId: org.id, offering: "h100" });
    await usage(tdb.db, "clu_a", [{ id: "smp-60-0-other", session: other.id, start: at(0), seconds: 3600 }]);
    expect((await billPendingUsage(b)).charged).toBe(4n * CREDIT);
  });

  it("charges only the new half hour of a sample billed alone that overlaps one billed before", async () => {
    // The lookup of time already charged must take every billed sample that ends inside the new one,
    // not only those that start inside it: [0, 3600) starts before [1800, 5400) and covers its first half.
    const { b } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, 100n * CREDIT);
    const s = await aSession(tdb.db, { ownerId: "usr_1", organizationId: org.id, offering: "h100" });
    await usage(tdb.db, "clu_a", [{ id: "smp-hour", session: s.id, start: at(0), seconds: 3600 }]);
    expect((await billPendingUsage(b)).charged).toBe(4n * CREDIT);
    await usage(tdb.db, "clu_a", [{ id: "smp-late", session: s.id, start: at(1800), seconds: 3600 }]);
    expect((await billPendingUsage(b)).charged).toBe(2n * CREDIT);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(100n * CREDIT - 6n * CREDIT);
  });

  it("costs twice for a two-GPU session on a one-GPU offering", async () => {
    const { b } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, 10n * CREDIT);
    const s = await aSession(tdb.db, { ownerId: "usr_1", organizationId: org.id, offering: "l4", gpuCount: 2 });
    await usage(tdb.db, "clu_a", [{ id: "smp-2gpu", session: s.id, start: at(0), seconds: 1800 }]);
    await billPendingUsage(b);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(10n * CREDIT - 800_000n);
  });

  it("charges a slice its offering's own rate, exactly: eight 1/8 sessions of an H100 for an hour and a 1/4 for odd intervals", async () => {
    const { b } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, 100n * CREDIT);
    const eighths = [];
    for (let i = 0; i < 8; i++)
      eighths.push(await aSession(tdb.db, { ownerId: "usr_1", organizationId: org.id, offering: "h100-1-8" }));
    for (const [i, s] of eighths.entries())
      await usage(tdb.db, "clu_a", [{ id: `smp-8-${i}`, session: s.id, start: at(0), seconds: 3600 }]);
    // 0.6 credits an hour each: the slice's rate, not the card's times its share again.
    expect((await billPendingUsage(b)).charged).toBe(8n * 600_000n);
    const quarter = await aSession(tdb.db, { ownerId: "usr_1", organizationId: org.id, offering: "h100-1-4" });
    // 1.15 credits an hour over 7 s intervals (2,236.11… units each): the fractions carry, nothing is lost.
    const full = Math.floor(3600 / 7); // 514 intervals of 7 s, then one of 2 s: an hour
    const samples = Array.from({ length: full + 1 }, (_, i) => ({
      id: `smp-q-${i}`,
      session: quarter.id,
      start: at(7 * i),
      seconds: i < full ? 7 : 3600 - 7 * full,
    }));
    await usage(tdb.db, "clu_a", samples);
    expect((await billPendingUsage(b)).charged).toBe(1_150_000n);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(100n * CREDIT - 4_800_000n - 1_150_000n);
  });

  it("draws on the owner's wallet first, then the project's, then the organization's", async () => {
    const { b } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, 10n * CREDIT);
    const user = await aWallet(tdb.db, org.id, "user", "usr_draw");
    const project = await aWallet(tdb.db, org.id, "project", "prj_draw");
    await grant(tdb.db, user.id, 1n * CREDIT);
    await grant(tdb.db, project.id, 2n * CREDIT);
    const s = await aSession(tdb.db, {
      ownerId: "usr_draw",
      organizationId: org.id,
      projectId: "prj_draw",
      offering: "h100",
    });
    // 1 hour of h100 = 4 credits: 1 from the user, 2 from the project, 1 from the organization.
    await usage(tdb.db, "clu_a", [{ id: "smp-draw", session: s.id, start: at(0), seconds: 3600 }]);
    await billPendingUsage(b);
    expect(await balanceOf(tdb.db, user.id)).toBe(0n);
    expect(await balanceOf(tdb.db, project.id)).toBe(0n);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(9n * CREDIT);
    const legs = await tdb
      .db("ledger_entries as e")
      .join("ledger_transactions as t", "t.seq", "e.txn_seq")
      .where("t.sample_id", "smp-draw")
      .select("e.wallet_id", "e.amount");
    expect(legs).toHaveLength(4);
  });

  it("books usage that no wallet can cover to the shortfall account, never leaving a wallet below its floor", async () => {
    const { b } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, 1n * CREDIT);
    const s = await aSession(tdb.db, { ownerId: "usr_1", organizationId: org.id, offering: "h100" });
    const before = await balanceOf(tdb.db, SHORTFALL_WALLET);
    await usage(tdb.db, "clu_a", [{ id: "smp-short", session: s.id, start: at(0), seconds: 3600 }]);
    const r = await billPendingUsage(b);
    expect(r.shortfall).toBe(3n * CREDIT);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(0n);
    expect(await balanceOf(tdb.db, SHORTFALL_WALLET)).toBe(before - 3n * CREDIT);
  });

  it("lets usage use a wallet's overdraft", async () => {
    const { b } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, 1n * CREDIT);
    await tdb
      .db("wallets")
      .where({ id: org.wallet.id })
      .update({ overdraft: (2n * CREDIT).toString() });
    const s = await aSession(tdb.db, { ownerId: "usr_1", organizationId: org.id, offering: "h100" });
    await usage(tdb.db, "clu_a", [{ id: "smp-od", session: s.id, start: at(0), seconds: 3600 }]);
    expect((await billPendingUsage(b)).shortfall).toBe(1n * CREDIT);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(-2n * CREDIT);
  });

  it("records a sample of an unknown session as a zero charge, once", async () => {
    const { b } = testBilling(tdb.db);
    await usage(tdb.db, "clu_a", [{ id: "smp-ghost", session: "ses_nobody", start: at(0), seconds: 10 }]);
    expect((await billPendingUsage(b)).samples).toBe(1);
    const t = await tdb.db("ledger_transactions").where({ sample_id: "smp-ghost" });
    expect(t).toHaveLength(1);
    expect(t[0].amount).toBe("0");
  });

  it("uses the rate the session was created with when its offering is gone", async () => {
    const { b } = testBilling(tdb.db, { offerings: {} });
    const org = await anOrganizationWallet(tdb.db, 10n * CREDIT);
    const s = await aSession(tdb.db, { ownerId: "usr_1", organizationId: org.id, offering: "a100" });
    await usage(tdb.db, "clu_a", [{ id: "smp-gone", session: s.id, start: at(0), seconds: 3600 }]);
    await billPendingUsage(b);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(7_500_000n);
  });

  it("charges a multi-GPU offering's recorded rate once, not once per GPU, when the offering is gone", async () => {
    const { b } = testBilling(tdb.db, { offerings: {} });
    const org = await anOrganizationWallet(tdb.db, 100n * CREDIT);
    // h100x2: 7 credits an hour for both of its GPUs.
    const s = await aSession(tdb.db, { ownerId: "usr_1", organizationId: org.id, offering: "h100x2", gpuCount: 2 });
    await usage(tdb.db, "clu_a", [{ id: "smp-gone-x2", session: s.id, start: at(0), seconds: 3600 }]);
    expect((await billPendingUsage(b)).charged).toBe(7n * CREDIT);
  });

  it("bills concurrent billers' samples once between them", async () => {
    const { b } = testBilling(tdb.db, { options: { chargeBatch: 7 } });
    const org = await anOrganizationWallet(tdb.db, 1000n * CREDIT);
    const sessions = await Promise.all(
      [1, 2, 3].map(() => aSession(tdb.db, { ownerId: "usr_1", organizationId: org.id, offering: "l4" })),
    );
    const samples = Array.from({ length: 300 }, (_, i) => ({
      id: `cc-${i}`,
      session: (sessions[i % 3] as { id: string }).id,
      start: at(i * 10),
      seconds: 10,
    }));
    await usage(tdb.db, "clu_a", samples);
    const results = await Promise.all([
      billPendingUsage(b),
      billPendingUsage(b),
      billPendingUsage(b),
      billPendingUsage(b),
    ]);
    expect(results.reduce((n, r) => n + r.samples, 0)).toBe(300);
    // 100 samples of 10 s per session at 800,000/h: exactly 222,222 units each (the carry holds the rest).
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(1000n * CREDIT - 3n * 222_222n);
  });
});

describe("charging within the wallets' spend limits", () => {
  /** A user rich in credits whose wallet has limits, in an organization with 10 credits. */
  async function limitedUser(limits: { maxSpendPerDay?: bigint; maxSpendPerMonth?: bigint }) {
    const { b, clock } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, 10n * CREDIT);
    const user = await aWallet(tdb.db, org.id, "user", `usr_lim_${org.id}`);
    await grant(tdb.db, user.id, 100n * CREDIT);
    await updateWalletLimits(tdb.db, user.id, limits, clock.now());
    const s = await aSession(tdb.db, { ownerId: user.owner_id, organizationId: org.id, offering: "h100" });
    /** The next hour of h100 (4 credits), charged at its end. */
    const anHour = async (id: string) => {
      await usage(tdb.db, "clu_a", [{ id: `${id}-${s.id}`, session: s.id, start: clock.now(), seconds: 3600 }]);
      clock.advance(3600);
      return billPendingUsage(b);
    };
    return { b, clock, org, user, s, anHour };
  }

  it("skips a wallet whose daily limit is reached: the next wallet in draw order pays, and the limit starts again the next day", async () => {
    const { clock, org, user, anHour } = await limitedUser({ maxSpendPerDay: 1n * CREDIT });
    await anHour("day1");
    expect(await balanceOf(tdb.db, user.id)).toBe(99n * CREDIT);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(7n * CREDIT);
    await anHour("day1-again");
    expect(await balanceOf(tdb.db, user.id)).toBe(99n * CREDIT);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(3n * CREDIT);
    clock.advance(86_400);
    await anHour("day2");
    expect(await balanceOf(tdb.db, user.id)).toBe(98n * CREDIT);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(0n);
  });

  it("caps a wallet by its monthly limit across the days of the month", async () => {
    const { clock, org, user, anHour } = await limitedUser({
      maxSpendPerDay: 10n * CREDIT,
      maxSpendPerMonth: 5n * CREDIT,
    });
    await anHour("m1");
    clock.advance(86_400);
    await anHour("m2");
    // 4 credits on the first day, 1 on the second (the month's 5), 3 from the organization.
    expect(await balanceOf(tdb.db, user.id)).toBe(95n * CREDIT);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(7n * CREDIT);
  });

  it("books usage no wallet may pay within its limits to the shortfall account, not past the limit", async () => {
    const { b, clock } = testBilling(tdb.db);
    const org = await anOrganizationWallet(tdb.db, 0n);
    const user = await aWallet(tdb.db, org.id, "user", "usr_lim_short");
    await grant(tdb.db, user.id, 100n * CREDIT);
    await updateWalletLimits(tdb.db, user.id, { maxSpendPerDay: 1n * CREDIT }, clock.now());
    const s = await aSession(tdb.db, { ownerId: "usr_lim_short", organizationId: org.id, offering: "h100" });
    await usage(tdb.db, "clu_a", [{ id: "smp-lim-short", session: s.id, start: at(0), seconds: 3600 }]);
    expect((await billPendingUsage(b)).shortfall).toBe(3n * CREDIT);
    expect(await balanceOf(tdb.db, user.id)).toBe(99n * CREDIT);
  });

  it("lets concurrent billers take a limited wallet exactly to its limit between them, never past it", async () => {
    const { b, clock } = testBilling(tdb.db, { options: { chargeBatch: 7 } });
    const org = await anOrganizationWallet(tdb.db, 1000n * CREDIT);
    const user = await aWallet(tdb.db, org.id, "user", "usr_lim_cc");
    await grant(tdb.db, user.id, 1000n * CREDIT);
    await updateWalletLimits(tdb.db, user.id, { maxSpendPerDay: 100_000n }, clock.now());
    const sessions = await Promise.all(
      [1, 2, 3].map(() => aSession(tdb.db, { ownerId: "usr_lim_cc", organizationId: org.id, offering: "l4" })),
    );
    await usage(
      tdb.db,
      "clu_a",
      Array.from({ length: 300 }, (_, i) => ({
        id: `lim-cc-${i}`,
        session: (sessions[i % 3] as { id: string }).id,
        start: at(i * 10),
        seconds: 10,
      })),
    );
    await Promise.all([billPendingUsage(b), billPendingUsage(b), billPendingUsage(b), billPendingUsage(b)]);
    expect(await balanceOf(tdb.db, user.id)).toBe(1000n * CREDIT - 100_000n);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(1000n * CREDIT - (3n * 222_222n - 100_000n));
  });
});
