import type { Knex } from "knex";
import { describe, expect, it } from "vitest";
import { insertSnapshot, updateSnapshot } from "../../db/operations/snapshots/snapshots.ts";
import { insertVolume } from "../../db/operations/volumes/insertVolume.ts";
import { writeStorageSettings } from "../../db/operations/volumes/storageSettings.ts";
import { updateVolume } from "../../db/operations/volumes/updateVolume.ts";
import { TestClock } from "../../http/http.test-support.ts";
import {
  anOrganizationWallet,
  aWallet,
  balanceOf,
  grant,
  testBilling,
  useLedgerDatabase,
} from "./credits.test-support.ts";
import { SHORTFALL_WALLET } from "./ids.ts";
import { checkLedgerInvariants } from "./invariants.ts";
import { billStorage, gbMs, priceStorage } from "./storage.ts";

const tdb = useLedgerDatabase();
const HOUR = 3_600_000;
const t0 = new Date("2026-11-22T10:00:00Z");
const at = (ms: number) => new Date(t0.getTime() + ms);

function billingAt(db: Knex, start: Date) {
  return testBilling(db, { clock: new TestClock(start) });
}
const set = (clock: TestClock, d: Date) => clock.advance((d.getTime() - clock.now().getTime()) / 1000);

let n = 0;
async function aVolume(db: Knex, org: string, o: { owner?: string; sizeGb: number; createdAt: Date }) {
  const id = `vol_${(Date.now().toString(36) + (n++).toString(36)).padEnd(20, "0").slice(0, 20)}`;
  await db("organizations")
    .insert({ id: org, name: org, slug: org.replace("_", "-") })
    .onConflict("id")
    .ignore();
  await insertVolume(db, {
    id,
    organization_id: org,
    owner_kind: "user",
    owner_id: o.owner ?? "usr_owner",
    name: id,
    size_gb: o.sizeGb,
    pool: "fast",
    namespace: `organization-${org}`,
    cr_name: id.replace("_", "-"),
    created_by: o.owner ?? "usr_owner",
    created_at: o.createdAt,
    updated_at: o.createdAt,
  });
  return id;
}

async function storageCharges(db: Knex, volume: string) {
  return (await db("ledger_transactions")
    .where({ kind: "charge", reason: "storage" })
    .whereRaw("metadata->>'volume' = ?", [volume])
    .orderBy("seq")) as { amount: string; idempotency_key: string; metadata: Record<string, string> }[];
}

describe("pricing storage", () => {
  it("adds each size's part of a span that straddles a resize", () => {
    const sizes = [
      { from: at(0), sizeGb: 10 },
      { from: at(HOUR / 2), sizeGb: 30 },
    ];
    expect(gbMs(sizes, 0 + t0.getTime(), t0.getTime() + HOUR)).toBe(BigInt(10 * (HOUR / 2) + 30 * (HOUR / 2)));
    // Before the volume existed costs nothing.
    expect(gbMs(sizes, t0.getTime() - HOUR, t0.getTime())).toBe(0n);
  });

  it("loses no unit: a year of hours of 7 GB at 3 units per GB-hour, one span at a time", () => {
    let carry = 0n;
    let total = 0n;
    for (let i = 0; i < 24 * 365; i++) {
      const p = priceStorage(carry, 3n, 7n * BigInt(HOUR - 1));
      total += p.amount;
      carry = p.carry;
    }
    expect(total).toBe((3n * 7n * BigInt(HOUR - 1) * BigInt(24 * 365)) / BigInt(HOUR));
  });
});

describe("charging storage", () => {
  it("charges a volume per GB-hour to its owner's wallet, exact to the unit and once per moment", async () => {
    const db = tdb.db;
    const org = await anOrganizationWallet(db, 1_000_000n);
    const mine = await aWallet(db, org.id, "user", "usr_owner");
    await grant(db, mine.id, 5_000_000n);
    await writeStorageSettings(db, { gb_hour_credit_rate: "1000" }, "usr_admin", t0);
    const vol = await aVolume(db, org.id, { sizeGb: 50, createdAt: at(HOUR / 4) }); // 10:15
    const { b, clock } = billingAt(db, t0);
    set(clock, at(HOUR + 5_000)); // 11:00:05: the span 10:15 to 11:00 is due
    await billStorage(b);
    // Twice, and two billers at once: nothing more.
    await Promise.all([billStorage(b), billStorage(b)]);
    let charges = await storageCharges(db, vol);
    expect(charges.map((c) => c.amount)).toEqual([String((50n * 1000n * 3n) / 4n)]); // 37,500
    expect(charges[0]?.idempotency_key).toBe(`storage:${vol}:${at(HOUR / 4).getTime()}`);
    expect(await balanceOf(db, mine.id)).toBe(5_000_000n - 37_500n);

    // Grown to 80 GB at 11:30, deleted at 11:45: charged to the deletion, each size for its part.
    await updateVolume(db, vol, { size_gb: 80, updated_at: at(HOUR * 1.5) });
    await updateVolume(db, vol, { deleted_at: at(HOUR * 1.75), updated_at: at(HOUR * 1.75) });
    set(clock, at(HOUR * 3));
    await billStorage(b);
    await billStorage(b);
    charges = await storageCharges(db, vol);
    expect(charges.map((c) => c.amount)).toEqual(["37500", String((50n * 1000n) / 2n + (80n * 1000n) / 4n)]);
    expect(charges[1]?.metadata.to).toBe(at(HOUR * 1.75).toISOString());
  });

  it("charges what the wallets cannot pay to shortfall and deletes nothing", async () => {
    const db = tdb.db;
    const org = await anOrganizationWallet(db, 10n);
    await writeStorageSettings(db, { gb_hour_credit_rate: "1000" }, "usr_admin", t0);
    const vol = await aVolume(db, org.id, { owner: "usr_poor", sizeGb: 1, createdAt: at(0) });
    const { b, clock } = billingAt(db, t0);
    const before = await balanceOf(db, SHORTFALL_WALLET);
    set(clock, at(2 * HOUR));
    await billStorage(b);
    const [charge] = await storageCharges(db, vol);
    expect(charge?.amount).toBe("2000");
    expect(await balanceOf(db, org.wallet.id)).toBe(0n);
    expect(await balanceOf(db, SHORTFALL_WALLET)).toBe(before - 1990n);
    expect(await db("volumes").where({ id: vol }).whereNull("deleted_at").first()).toBeDefined();
  });

  it("charges an undone delete's grace time too: the volume existed all along", async () => {
    const db = tdb.db;
    const org = await anOrganizationWallet(db, 1_000_000_000n);
    await writeStorageSettings(db, { gb_hour_credit_rate: "1000" }, "usr_admin", t0);
    const vol = await aVolume(db, org.id, { sizeGb: 10, createdAt: at(0) });
    const { b, clock } = billingAt(db, t0);
    await updateVolume(db, vol, { deleted_at: at(HOUR / 2), updated_at: at(HOUR / 2) });
    set(clock, at(HOUR));
    await billStorage(b);
    await updateVolume(db, vol, { deleted_at: null, updated_at: at(HOUR) });
    set(clock, at(3 * HOUR + 1));
    await billStorage(b);
    const charges = await storageCharges(db, vol);
    expect(charges.map((c) => c.amount)).toEqual(["5000", "25000"]);
  });
});

describe("charging snapshots", () => {
  it("charges a snapshot's size per GB-hour like a volume, up to its deletion, and a failed one up to its failure", async () => {
    const db = tdb.db;
    const org = await anOrganizationWallet(db, 1_000_000n);
    const mine = await aWallet(db, org.id, "user", "usr_snap");
    await grant(db, mine.id, 5_000_000n);
    await writeStorageSettings(db, { gb_hour_credit_rate: "1000" }, "usr_admin", t0);
    const vol = await aVolume(db, org.id, { owner: "usr_snap", sizeGb: 20, createdAt: at(0) });
    const snap = async (id: string, createdAt: Date) =>
      insertSnapshot(db, {
        id,
        volume_id: vol,
        organization_id: org.id,
        owner_kind: "user",
        owner_id: "usr_snap",
        name: id,
        pool: "fast",
        size_gb: 20,
        state: "creating",
        cluster_id: null,
        k8s_name: id.replace("_", "-"),
        created_by: "usr_snap",
        created_at: createdAt,
        updated_at: createdAt,
      });
    const kept = `snap_${"k".repeat(20)}`;
    const failed = `snap_${"f".repeat(20)}`;
    await snap(kept, at(HOUR / 2)); // 10:30
    await snap(failed, at(HOUR / 2));
    await updateSnapshot(db, failed, { state: "failed", failed_at: at(HOUR * 0.75), updated_at: at(HOUR * 0.75) });
    const { b, clock } = billingAt(db, t0);
    set(clock, at(HOUR + 5_000));
    await Promise.all([billStorage(b), billStorage(b)]);
    await updateSnapshot(db, kept, { state: "deleting", deleted_at: at(HOUR * 1.25), updated_at: at(HOUR * 1.25) });
    set(clock, at(HOUR * 3));
    await billStorage(b);
    const charges = async (id: string) =>
      (
        (await db("ledger_transactions")
          .where({ kind: "charge", reason: "storage" })
          .whereRaw("metadata->>'snapshot' = ?", [id])
          .orderBy("seq")) as { amount: string; metadata: Record<string, string> }[]
      ).map((c) => [c.amount, c.metadata.source_volume, c.metadata.to]);
    // 20 GB at 1,000 units per GB-hour: 10:30–11:00 and 11:00–11:15; the failed one 10:30–10:45.
    expect(await charges(kept)).toEqual([
      ["10000", vol, at(HOUR).toISOString()],
      ["5000", vol, at(HOUR * 1.25).toISOString()],
    ]);
    expect(await charges(failed)).toEqual([["5000", vol, at(HOUR * 0.75).toISOString()]]);
    // Snapshot charges are not a volume's: the volume's own charges are its own size only.
    expect((await storageCharges(db, vol)).every((c) => c.metadata.snapshot === undefined)).toBe(true);
    expect(await checkLedgerInvariants(db)).toEqual([]);
  });
});
