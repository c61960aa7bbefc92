// Storage charging: a volume costs its provisioned size per GB-hour while it exists (running sessions or
// not), at the fleet's storage rate (minor units per GB-hour; `PUT /storage/settings`), to its owner's
// wallet through the same ledger and draw order as usage (docs/dev/billing.md, docs/dev/storage.md).
//
// Once per moment: each volume has a billing row (billed_until, the carried remainder) locked for the
// span it charges, and each span's ledger key is storage:<volume>:<span start>. Spans end on a fixed,
// epoch-aligned grid (storageIntervalMs, default an hour) so a live volume makes one ledger row per
// interval, or at the volume's deletion. A deleted volume is charged up to its deletion; one whose
// delete was undone is charged on from there (it existed all along). A span that straddles a resize is
// priced at each size for its own part (volume_sizes).
//
//   numerator = carry + rate x GB x ms      (units x 3,600,000)
//   charge    = numerator div 3,600,000;  carry = numerator mod 3,600,000
//
// Out of credits, storage goes to the shortfall account like usage: data is never deleted for money.
import type { Knex } from "knex";
import { insertAuditRecord } from "../../db/operations/audit/insertAuditRecord.ts";
import { insertTransactions, type NewTransaction } from "../../db/operations/ledger/insertTransactions.ts";
import { lockWalletsOfOwners } from "../../db/operations/ledger/lockWallets.ts";
import {
  type DueSnapshot,
  lockDueSnapshots,
  saveSnapshotBilling,
} from "../../db/operations/snapshots/snapshotBilling.ts";
import {
  type DueVolume,
  lockDueVolumes,
  saveVolumeBilling,
  volumeSizes,
} from "../../db/operations/volumes/storageBilling.ts";
import { readStorageSettings } from "../../db/operations/volumes/storageSettings.ts";
import { allowancesLeft, walletAllowances } from "./allowances.ts";
import { billInBatches } from "./batches.ts";
import { drawFrom } from "./charge.ts";
import type { CreditsContext } from "./context.ts";
import { billingId, SHORTFALL_WALLET, USAGE_WALLET } from "./ids.ts";
import { MS_PER_HOUR, units } from "./money.ts";
import { ownerKey, walletKey } from "./wallets.ts";

/** 0.0001 credit per GB-hour (about 0.073 credit per GB a month) until a super_admin sets one. */
export const DEFAULT_STORAGE_RATE = 100n;

/** The rate (units per GB-hour) in the stored storage settings, or the default. */
export async function storageRate(db: Knex): Promise<bigint> {
  const v = (await readStorageSettings(db))?.gb_hour_credit_rate;
  return typeof v === "string" && /^(0|[1-9][0-9]{0,18})$/.test(v) ? BigInt(v) : DEFAULT_STORAGE_RATE;
}

/** GB x milliseconds of [from, to) given the volume's sizes (oldest first). Pure. */
export function gbMs(sizes: readonly { from: Date; sizeGb: number }[], from: number, to: number): bigint {
  let total = 0n;
  for (const [i, s] of sizes.entries()) {
    const next = sizes[i + 1];
    const a = Math.max(from, s.from.getTime());
    const b = Math.min(to, next ? next.from.getTime() : Number.POSITIVE_INFINITY);
    if (b > a) total += BigInt(s.sizeGb) * BigInt(b - a);
  }
  return total;
}

/** The charge for `gbms` at `rate` from the carried remainder; answers the new remainder. Pure. */
export function priceStorage(carry: bigint, rate: bigint, gbms: bigint): { amount: bigint; carry: bigint } {
  const num = carry + rate * gbms;
  return { amount: num / MS_PER_HOUR, carry: num % MS_PER_HOUR };
}

/** What `hours` of `sizeGb` cost at `rate`, rounded up to a unit (previews, never charging). */
export function storageCostOf(rate: bigint, sizeGb: number, seconds: number): bigint {
  const num = rate * BigInt(sizeGb) * BigInt(seconds);
  return (num + 3599n) / 3600n;
}

export interface StorageBillResult {
  volumes: number;
  /** Snapshots charged in the pass (they are billed like volumes: docs/dev/storage.md, "Snapshots"). */
  snapshots: number;
  charged: bigint;
  shortfall: bigint;
  wallets: Set<string>;
}

/**
 * Charges every volume's and snapshot's storage due up to the last grid boundary (deleted ones: up to
 * their deletion; failed snapshots: up to their failure).
 */
export async function billStorage(b: CreditsContext, opts: { maxBatches?: number } = {}): Promise<StorageBillResult> {
  const vols = await billInBatches(b, opts.maxBatches, (tx) => billStorageBatch(b, tx, volumeSource));
  const snaps = await billInBatches(b, opts.maxBatches, (tx) => billStorageBatch(b, tx, snapshotSource));
  return {
    volumes: vols.items,
    snapshots: snaps.items,
    charged: vols.charged + snaps.charged,
    shortfall: vols.shortfall + snaps.shortfall,
    wallets: new Set([...vols.wallets, ...snaps.wallets]),
  };
}

/** One thing that holds storage and is charged for it: a volume or a snapshot. */
interface Due {
  id: string;
  organization_id: string;
  owner_kind: "user" | "project";
  owner_id: string;
  /** Charged up to here at most (deleted, failed); null: up to the grid. */
  end: Date | null;
  billed_until: Date;
  carry: string;
  charged: string;
  spans: number;
  /** A snapshot's: its size (constant) and the volume it was taken of. */
  snapshot?: { sizeGb: number; volume: string };
}

interface Saved {
  id: string;
  billed_until: Date;
  carry: bigint;
  charged: bigint;
  spans: number;
}

interface StorageSource {
  /** The ledger metadata's key naming the thing (the invariants read `volume`). */
  key: "volume" | "snapshot";
  lock(tx: Knex.Transaction, until: Date, limit: number): Promise<Due[]>;
  /** GB x ms of each due thing over its span. */
  gbMs(tx: Knex.Transaction, due: Due[], spans: Map<string, [number, number]>): Promise<Map<string, bigint>>;
  save(tx: Knex.Transaction, rows: Saved[], at: Date): Promise<void>;
  metadata(d: Due): Record<string, string>;
}

const volumeSource: StorageSource = {
  key: "volume",
  lock: async (tx, until, limit) =>
    (await lockDueVolumes(tx, until, limit)).map((v: DueVolume) => ({ ...v, id: v.volume_id, end: v.deleted_at })),
  async gbMs(tx, due, spans) {
    const sizes = await volumeSizes(
      tx,
      due.map((v) => v.id),
    );
    return new Map([...spans].map(([id, [from, to]]) => [id, gbMs(sizes.get(id) ?? [], from, to)] as [string, bigint]));
  },
  save: (tx, rows, at) =>
    saveVolumeBilling(
      tx,
      rows.map((r) => ({ ...r, volume_id: r.id })),
      at,
    ),
  metadata: () => ({}),
};

const snapshotSource: StorageSource = {
  key: "snapshot",
  lock: async (tx, until, limit) =>
    (await lockDueSnapshots(tx, until, limit)).map((s: DueSnapshot) => ({
      ...s,
      id: s.snapshot_id,
      end: s.ended_at,
      snapshot: { sizeGb: s.size_gb, volume: s.volume_id },
    })),
  async gbMs(_tx, due, spans) {
    const out = new Map<string, bigint>();
    for (const d of due) {
      const span = spans.get(d.id);
      if (span) out.set(d.id, BigInt(d.snapshot?.sizeGb ?? 0) * BigInt(span[1] - span[0]));
    }
    return out;
  },
  save: saveSnapshotBilling,
  metadata: (d): Record<string, string> => (d.snapshot ? { source_volume: d.snapshot.volume } : {}),
};

function chainOf(v: Due) {
  const org = { organizationId: v.organization_id, kind: "organization", id: v.organization_id };
  return [{ organizationId: v.organization_id, kind: v.owner_kind, id: v.owner_id }, org];
}

async function billStorageBatch(
  b: CreditsContext,
  tx: Knex.Transaction,
  source: StorageSource,
): Promise<StorageBillResult & { items: number }> {
  const now = b.clock.now();
  const grid = b.options.storageIntervalMs;
  const until = new Date(Math.floor(now.getTime() / grid) * grid);
  const due = await source.lock(tx, until, b.options.chargeBatch);
  const result = {
    items: due.length,
    volumes: 0,
    snapshots: 0,
    charged: 0n,
    shortfall: 0n,
    wallets: new Set<string>(),
  };
  if (due.length === 0) return result;
  const rate = await storageRate(tx);
  const spans = new Map<string, [number, number]>();
  for (const v of due) {
    const from = v.billed_until.getTime();
    const to = Math.min(until.getTime(), v.end ? v.end.getTime() : Number.POSITIVE_INFINITY);
    if (to > from) spans.set(v.id, [from, to]);
  }
  const amounts = await source.gbMs(tx, due, spans);
  const owners = [...new Map(due.flatMap(chainOf).map((o) => [ownerKey(o), o])).values()];
  const locked = await lockWalletsOfOwners(tx, owners);
  const byOwner = new Map(locked.map((w) => [walletKey(w), w]));
  const balances = new Map(locked.map((w) => [w.id, units(w.balance)]));
  const allowances = allowancesLeft(await walletAllowances(tx, locked, now));
  const batchId = `billing:${billingId("txn").slice(4)}`;
  const txns: NewTransaction[] = [];
  const saved: Saved[] = [];
  for (const v of due) {
    const span = spans.get(v.id);
    if (!span) continue;
    const [from, to] = span;
    const gbms = amounts.get(v.id) ?? 0n;
    const p = priceStorage(units(v.carry), rate, gbms);
    saved.push({
      id: v.id,
      billed_until: new Date(to),
      carry: p.carry,
      charged: units(v.charged) + p.amount,
      spans: v.spans + 1,
    });
    if (p.amount === 0n) continue;
    const chain = chainOf(v).flatMap((o) => byOwner.get(ownerKey(o)) ?? []);
    const { paid, shortfall } = drawFrom(chain, balances, p.amount, allowances);
    for (const x of paid) result.wallets.add(x.walletId);
    result.charged += p.amount;
    result.shortfall += shortfall;
    txns.push({
      id: billingId("txn"),
      kind: "charge",
      amount: p.amount,
      idempotencyKey: `storage:${v.id}:${from}`,
      organizationId: v.organization_id,
      actorKind: "system",
      actorId: "system:billing",
      requestId: batchId,
      reason: "storage",
      at: now,
      legs: [
        ...paid.map((x) => ({ walletId: x.walletId, amount: -x.amount })),
        ...(shortfall > 0n ? [{ walletId: SHORTFALL_WALLET, amount: -shortfall }] : []),
        { walletId: USAGE_WALLET, amount: p.amount },
      ],
      metadata: {
        [source.key]: v.id,
        ...source.metadata(v),
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        gb_ms: gbms.toString(),
        rate_per_gb_hour: rate.toString(),
        ...(shortfall > 0n ? { shortfall: shortfall.toString() } : {}),
      },
    });
  }
  const { duplicates } = await insertTransactions(tx, txns, { onDuplicate: "skip" });
  // The billing rows were locked and say these spans are not charged: a key already in the ledger means
  // the row was edited by hand. Refuse rather than move billed_until past money that was never taken.
  if (duplicates.length > 0)
    throw new Error(`storage spans already in the ledger for ${duplicates.length} ${source.key}s`);
  await source.save(tx, saved, now);
  if (txns.length > 0)
    await insertAuditRecord(tx, {
      action: "credits.storage_charge",
      actorKind: "system",
      actorReason: "billing: storage charged",
      actorId: null,
      organizationId: null,
      targetKind: `${source.key}s`,
      targetId: null,
      requestId: batchId,
      outcome: "success",
      status: 200,
      details: {
        [`${source.key}s`]: txns.length,
        charged: result.charged.toString(),
        shortfall: result.shortfall.toString(),
      },
      at: now,
    });
  return result;
}
