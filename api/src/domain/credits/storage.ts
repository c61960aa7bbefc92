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
  charged: bigint;
  shortfall: bigint;
  wallets: Set<string>;
}

/** Charges every volume's storage due up to the last grid boundary (deleted ones: up to their deletion). */
export async function billStorage(b: CreditsContext, opts: { maxBatches?: number } = {}): Promise<StorageBillResult> {
  const t = await billInBatches(b, opts.maxBatches, async (tx) => {
    const r = await billStorageBatch(b, tx);
    return { ...r, items: r.volumes };
  });
  return { volumes: t.items, charged: t.charged, shortfall: t.shortfall, wallets: t.wallets };
}

function volumeChain(v: DueVolume) {
  const org = { organizationId: v.organization_id, kind: "organization", id: v.organization_id };
  return [{ organizationId: v.organization_id, kind: v.owner_kind, id: v.owner_id }, org];
}

async function billStorageBatch(b: CreditsContext, tx: Knex.Transaction): Promise<StorageBillResult> {
  const now = b.clock.now();
  const grid = b.options.storageIntervalMs;
  const until = new Date(Math.floor(now.getTime() / grid) * grid);
  const due = await lockDueVolumes(tx, until, b.options.chargeBatch);
  const result: StorageBillResult = { volumes: due.length, charged: 0n, shortfall: 0n, wallets: new Set() };
  if (due.length === 0) return result;
  const rate = await storageRate(tx);
  const sizes = await volumeSizes(
    tx,
    due.map((v) => v.volume_id),
  );
  const owners = [...new Map(due.flatMap(volumeChain).map((o) => [ownerKey(o), o])).values()];
  const locked = await lockWalletsOfOwners(tx, owners);
  const byOwner = new Map(locked.map((w) => [walletKey(w), w]));
  const balances = new Map(locked.map((w) => [w.id, units(w.balance)]));
  const allowances = allowancesLeft(await walletAllowances(tx, locked, now));
  const batchId = `billing:${billingId("txn").slice(4)}`;
  const txns: NewTransaction[] = [];
  const saved: Parameters<typeof saveVolumeBilling>[1][number][] = [];
  for (const v of due) {
    const from = v.billed_until.getTime();
    const to = Math.min(until.getTime(), v.deleted_at ? v.deleted_at.getTime() : Number.POSITIVE_INFINITY);
    if (to <= from) continue;
    const gbms = gbMs(sizes.get(v.volume_id) ?? [], from, to);
    const p = priceStorage(units(v.carry), rate, gbms);
    saved.push({
      volume_id: v.volume_id,
      billed_until: new Date(to),
      carry: p.carry,
      charged: units(v.charged) + p.amount,
      spans: v.spans + 1,
    });
    if (p.amount === 0n) continue;
    const chain = volumeChain(v).flatMap((o) => byOwner.get(ownerKey(o)) ?? []);
    const { paid, shortfall } = drawFrom(chain, balances, p.amount, allowances);
    for (const x of paid) result.wallets.add(x.walletId);
    result.charged += p.amount;
    result.shortfall += shortfall;
    txns.push({
      id: billingId("txn"),
      kind: "charge",
      amount: p.amount,
      idempotencyKey: `storage:${v.volume_id}:${from}`,
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
        volume: v.volume_id,
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
  if (duplicates.length > 0) throw new Error(`storage spans already in the ledger for ${duplicates.length} volumes`);
  await saveVolumeBilling(tx, saved, now);
  if (txns.length > 0)
    await insertAuditRecord(tx, {
      action: "credits.storage_charge",
      actorKind: "system",
      actorReason: "billing: storage charged",
      actorId: null,
      organizationId: null,
      targetKind: "volumes",
      targetId: null,
      requestId: batchId,
      outcome: "success",
      status: 200,
      details: { volumes: txns.length, charged: result.charged.toString(), shortfall: result.shortfall.toString() },
      at: now,
    });
  return result;
}
