// The worker's billing loop against Postgres, with a clock the test owns and a stand-in management
// cluster: refills exactly once per period across restarts and overlapping leaders, and Wallet
// resources written on change, coalesced.

import { resourcePath, WalletKind } from "@berth/crds";
import pino from "pino";
import { describe, expect, it } from "vitest";
import {
  anOrganizationWallet,
  aSession,
  aWallet,
  balanceOf,
  CREDIT,
  testBilling,
  usage,
  useLedgerDatabase,
} from "../domain/credits/credits.test-support.ts";
import { FakeManagementCluster } from "../domain/credits/fakes.test-support.ts";
import { WalletMirror } from "../domain/credits/mirror.ts";
import { TestClock } from "../http/http.test-support.ts";
import { BillingLoop } from "./billingLoop.ts";

const tdb = useLedgerDatabase();

const noPause = async () => false;

async function aRefill(o: {
  walletId: string;
  sourceId: string;
  mode: "top_up_to" | "add";
  amount: bigint;
  period: "daily" | "weekly" | "monthly";
  startsAt: Date;
}) {
  const id = `rfl_${Math.random().toString(36).slice(2, 12)}`;
  await tdb.db("refills").insert({
    id,
    wallet_id: o.walletId,
    source_wallet_id: o.sourceId,
    mode: o.mode,
    amount: o.amount.toString(),
    period: o.period,
    starts_at: o.startsAt,
    created_by: "usr_admin",
    created_at: o.startsAt,
    updated_at: o.startsAt,
  });
  return id;
}

describe("refills", () => {
  it("applies a refill once per period across a worker restart, and each missed period once after downtime", async () => {
    const clock = new TestClock(new Date("2026-11-22T08:00:00Z"));
    const org = await anOrganizationWallet(tdb.db, 100n * CREDIT);
    const user = await aWallet(tdb.db, org.id, "user", "usr_refilled");
    const id = await aRefill({
      walletId: user.id,
      sourceId: org.wallet.id,
      mode: "add",
      amount: 2n * CREDIT,
      period: "daily",
      startsAt: clock.now(),
    });

    const first = new BillingLoop({ billing: testBilling(tdb.db, { clock }).b, pause: noPause });
    await first.pass();
    await first.pass();
    expect(await balanceOf(tdb.db, user.id)).toBe(2n * CREDIT);
    await first.stop();

    // The worker restarts later the same day: nothing new.
    clock.advance(3600);
    const second = new BillingLoop({ billing: testBilling(tdb.db, { clock }).b, pause: noPause });
    await second.pass();
    expect(await balanceOf(tdb.db, user.id)).toBe(2n * CREDIT);

    // Next day: once.
    clock.advance(24 * 3600);
    await second.pass();
    await second.pass();
    expect(await balanceOf(tdb.db, user.id)).toBe(4n * CREDIT);
    await second.stop();

    // Three days of downtime: the three missed days are applied once each, oldest first.
    clock.advance(3 * 24 * 3600);
    const third = new BillingLoop({ billing: testBilling(tdb.db, { clock }).b, pause: noPause });
    await third.pass();
    expect(await balanceOf(tdb.db, user.id)).toBe(10n * CREDIT);
    const periods = (await tdb.db("refill_applications").where({ refill_id: id }).orderBy("period_start")).map(
      (a: { period_start: Date }) => a.period_start.toISOString(),
    );
    expect(periods).toEqual([
      "2026-11-22T00:00:00.000Z",
      "2026-11-23T00:00:00.000Z",
      "2026-11-24T00:00:00.000Z",
      "2026-11-25T00:00:00.000Z",
      "2026-11-26T00:00:00.000Z",
    ]);
  });

  it("tops a wallet up to its amount, moving nothing when it is full", async () => {
    const clock = new TestClock(new Date("2026-11-02T08:00:00Z"));
    const org = await anOrganizationWallet(tdb.db, 100n * CREDIT);
    const user = await aWallet(tdb.db, org.id, "user", "usr_topped");
    await aRefill({
      walletId: user.id,
      sourceId: org.wallet.id,
      mode: "top_up_to",
      amount: 5n * CREDIT,
      period: "weekly",
      startsAt: clock.now(),
    });
    const { b } = testBilling(tdb.db, { clock });
    const loop = new BillingLoop({ billing: b, pause: noPause });
    await loop.pass();
    expect(await balanceOf(tdb.db, user.id)).toBe(5n * CREDIT);
    // Spend 3 of them through usage, then a week later it is topped back up to 5.
    const s = await aSession(tdb.db, { ownerId: "usr_topped", organizationId: org.id, offering: "a100" });
    await usage(tdb.db, "clu_r", [{ id: "topped-1", session: s.id, start: clock.now(), seconds: 3600 + 720 }]);
    await loop.pass();
    expect(await balanceOf(tdb.db, user.id)).toBe(2n * CREDIT);
    clock.advance(7 * 24 * 3600);
    await loop.pass();
    expect(await balanceOf(tdb.db, user.id)).toBe(5n * CREDIT);
    const apps = await tdb
      .db("refill_applications")
      .whereIn("refill_id", tdb.db("refills").select("id").where({ wallet_id: user.id }))
      .orderBy("period_start");
    expect(apps.map((a: { moved: string }) => a.moved)).toEqual([(5n * CREDIT).toString(), (3n * CREDIT).toString()]);
  });

  it("applies a period once when two leaders overlap", async () => {
    const clock = new TestClock(new Date("2026-11-22T08:00:00Z"));
    const org = await anOrganizationWallet(tdb.db, 100n * CREDIT);
    const project = await aWallet(tdb.db, org.id, "project", "prj_overlap");
    await aRefill({
      walletId: project.id,
      sourceId: org.wallet.id,
      mode: "add",
      amount: 1n * CREDIT,
      period: "monthly",
      startsAt: new Date("2026-08-15T00:00:00Z"),
    });
    const loops = Array.from(
      { length: 4 },
      () => new BillingLoop({ billing: testBilling(tdb.db, { clock }).b, pause: noPause }),
    );
    await Promise.all(loops.map((l) => l.pass()));
    // August, September, October, November: four periods, once each.
    expect(await balanceOf(tdb.db, project.id)).toBe(4n * CREDIT);
  });

  it("pays what the source has when it cannot pay everything, and counts the period as applied", async () => {
    const clock = new TestClock(new Date("2026-11-22T08:00:00Z"));
    const org = await anOrganizationWallet(tdb.db, 1n * CREDIT);
    const user = await aWallet(tdb.db, org.id, "user", "usr_short");
    await aRefill({
      walletId: user.id,
      sourceId: org.wallet.id,
      mode: "add",
      amount: 3n * CREDIT,
      period: "daily",
      startsAt: clock.now(),
    });
    const loop = new BillingLoop({ billing: testBilling(tdb.db, { clock }).b, pause: noPause });
    await loop.pass();
    await loop.pass();
    expect(await balanceOf(tdb.db, user.id)).toBe(1n * CREDIT);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(0n);
  });
});

describe("the Wallet resources", () => {
  it("mirrors balance and last sequence on change, once per pass however many charges came in between", async () => {
    const clock = new TestClock(new Date("2026-11-22T12:00:00Z"));
    const kube = new FakeManagementCluster();
    const mirror = new WalletMirror({ db: tdb.db, kube, log: pino({ level: "silent" }), clock });
    const org = await anOrganizationWallet(tdb.db, 10n * CREDIT);
    await mirror.sync();
    const path = resourcePath(WalletKind, {
      namespace: String(org.wallet.cr_namespace),
      name: String(org.wallet.cr_name),
    });
    const cr = kube.objects.get(path) as {
      spec: { owner: unknown };
      status: { balance: string; lastAppliedSequence: number };
    };
    expect(cr.spec.owner).toEqual({ kind: "organization", id: org.id });
    expect(cr.status.balance).toBe((10n * CREDIT).toString());

    const s = await aSession(tdb.db, { ownerId: "usr_m", organizationId: org.id, offering: "l4" });
    await usage(
      tdb.db,
      "clu_m",
      Array.from({ length: 100 }, (_, i) => ({
        id: `mirror-${i}`,
        session: s.id,
        start: new Date(clock.now().getTime() + i * 10_000),
        seconds: 10,
      })),
    );
    const loop = new BillingLoop({ billing: testBilling(tdb.db, { clock }).b, pause: noPause, mirror });
    const before = kube.patches.filter((p) => p.path === `${path}/status`).length;
    await loop.pass();
    await loop.pass();
    const statusWrites = kube.patches.filter((p) => p.path === `${path}/status`).length - before;
    expect(statusWrites).toBe(1);
    const row = await tdb.db("wallets").where({ id: org.wallet.id }).first();
    expect(cr.status.balance).toBe(row.balance);
    expect(cr.status.lastAppliedSequence).toBe(Number(row.last_sequence));
    expect(row.balance).toBe((10n * CREDIT - 222_222n).toString());
  });
});
