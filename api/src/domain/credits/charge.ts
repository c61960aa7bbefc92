// Charging: usage samples (POST /internal/v1/usage, stored once per (cluster, sample id)) become ledger
// transactions, one per sample, keyed by (cluster, sample id): a sample is charged once, whatever
// duplicates, retries, crashes or concurrent billers happen.
//
// The price of a sample: its interval's length in milliseconds at the session's rate, the offering's
// hourly rate x the session's GPUs / the offering's GPUs (live offering; when it no longer exists, the
// rate recorded on the session at creation). The exact amount is rarely a whole unit (0.8 credit/h is
// 222.2... units per second), so each session carries the fraction below one unit to its next sample:
//
//   numerator = carry + perHour x ms          (in units x 3,600,000 x divisor)
//   charge    = numerator div (3,600,000 x divisor)
//   carry     = numerator mod (3,600,000 x divisor)
//
// Over a session's life the charges add up to the exact cost rounded down, and what is left is below one
// unit (never lost, only not yet due). A session whose cluster stops reporting is charged up to its last
// sample; paused and terminated sessions send none, so they cost nothing.
//
// Payment follows the draw order (wallets.ts): each wallet down to its floor and within its daily and
// monthly spend limits (allowances.ts: a wallet whose limit is reached is skipped, the next one pays);
// what no wallet can cover is booked to the `shortfall` account, never left out (the running-out watch
// pauses sessions before that happens, so it is at most the last minute's usage).
import type { Knex } from "knex";
import { insertAuditRecord } from "../../db/operations/audit/insertAuditRecord.ts";
import { type CarryRow, lockCarries, saveCarries } from "../../db/operations/ledger/carries.ts";
import { insertTransactions, type NewTransaction } from "../../db/operations/ledger/insertTransactions.ts";
import { lockWalletsOfOwners } from "../../db/operations/ledger/lockWallets.ts";
import { type BillableSession, sessionsForBilling } from "../../db/operations/ledger/sessionsForBilling.ts";
import type { WalletRow } from "../../db/operations/ledger/types.ts";
import {
  billedPeriods,
  lockUnbilledSamples,
  markSamplesBilled,
  type UnbilledSample,
} from "../../db/operations/ledger/unbilledSamples.ts";
import { allowancesLeft, walletAllowances } from "./allowances.ts";
import { billInBatches } from "./batches.ts";
import type { CreditsContext, OfferingRate } from "./context.ts";
import { Coverage } from "./coverage.ts";
import { billingId, SHORTFALL_WALLET, USAGE_WALLET } from "./ids.ts";
import { spendable } from "./ledger.ts";
import { atPermille, MS_PER_HOUR, min, sessionRate, units } from "./money.ts";
import { chainOwners, ownerKey, walletKey } from "./wallets.ts";

export interface PricedCharge {
  sample: UnbilledSample;
  amount: bigint;
  /** What each wallet paid, in draw order; the rest went to shortfall. */
  paid: { walletId: string; amount: bigint }[];
  shortfall: bigint;
}

/**
 * The session's rate: live offering, else the rate it was created with (for the offering's GPUs then); a
 * borrowed session pays the offering's borrowed share of it (else the share recorded at creation).
 */
export function rateOf(s: BillableSession, offering: OfferingRate | undefined): { perHour: bigint; divisor: bigint } {
  const full = offering
    ? sessionRate(units(offering.hourlyCreditRate), offering.gpuCount, s.gpu_count)
    : sessionRate(units(s.hourly_credit_rate), s.offering_gpu_count, s.gpu_count);
  return atPermille(full, permilleOf(s, offering));
}

/** Thousandths of the full rate the session pays (docs/dev/fair-share.md). */
export function permilleOf(s: BillableSession, offering: OfferingRate | undefined): number {
  if (s.capacity_class !== "borrowed") return 1000;
  return offering ? (offering.borrowedRatePermille ?? 1000) : (s.rate_permille ?? 1000);
}

/** One sample's charge from the session's carried remainder; answers the new remainder. Pure. */
export function priceInterval(
  carry: { carry: bigint; divisor: bigint },
  rate: { perHour: bigint; divisor: bigint },
  ms: bigint,
): { amount: bigint; carry: bigint; divisor: bigint } {
  // A changed divisor (the offering's GPU count changed): re-express the remainder, rounding it down.
  let c = carry.carry;
  if (carry.divisor !== rate.divisor) c = (c * rate.divisor) / carry.divisor;
  const den = MS_PER_HOUR * rate.divisor;
  const num = c + rate.perHour * (ms > 0n ? ms : 0n);
  return { amount: num / den, carry: num % den, divisor: rate.divisor };
}

/**
 * Splits an amount over wallets in draw order, each down to its floor and within its allowance (what a
 * wallet with a spend limit may still pay this period; absent: unlimited). Mutates `balances` and
 * `allowances`. Pure otherwise.
 */
export function drawFrom(
  chain: readonly WalletRow[],
  balances: Map<string, bigint>,
  amount: bigint,
  allowances: Map<string, bigint> = new Map(),
): { paid: { walletId: string; amount: bigint }[]; shortfall: bigint } {
  let left = amount;
  const paid: { walletId: string; amount: bigint }[] = [];
  for (const w of chain) {
    if (left === 0n) break;
    const floor = spendable({ ...w, balance: (balances.get(w.id) ?? 0n).toString() });
    const allowance = allowances.get(w.id);
    const take = min(left, allowance === undefined ? floor : min(floor, allowance));
    if (take > 0n) {
      paid.push({ walletId: w.id, amount: take });
      balances.set(w.id, (balances.get(w.id) ?? 0n) - take);
      if (allowance !== undefined) allowances.set(w.id, allowance - take);
      left -= take;
    }
  }
  return { paid, shortfall: left };
}

export interface BillResult {
  samples: number;
  charged: bigint;
  shortfall: bigint;
  /** Wallets that paid something (the running-out watch and the mirror look at them). */
  wallets: Set<string>;
}

/**
 * Bills what is unbilled (optionally of one cluster), in transactions of `chargeBatch` samples, until none
 * is left that another biller does not hold. Safe to run anywhere, any number of times, concurrently.
 */
export async function billPendingUsage(
  b: CreditsContext,
  opts: { clusterId?: string; maxBatches?: number; receivedBefore?: Date } = {},
): Promise<BillResult> {
  const t = await billInBatches(b, opts.maxBatches, async (tx) => {
    const r = await billBatch(b, tx, opts);
    return { ...r, items: r.samples };
  });
  return { samples: t.items, charged: t.charged, shortfall: t.shortfall, wallets: t.wallets };
}

async function billBatch(
  b: CreditsContext,
  tx: Knex.Transaction,
  opts: { clusterId?: string; receivedBefore?: Date },
): Promise<BillResult> {
  const samples = await lockUnbilledSamples(tx, { limit: b.options.chargeBatch, ...opts });
  const result: BillResult = { samples: samples.length, charged: 0n, shortfall: 0n, wallets: new Set() };
  if (samples.length === 0) return result;
  const now = b.clock.now();

  const sessions = await sessionsForBilling(
    tx,
    samples.map((s) => s.session),
  );
  const offerings = new Map<string, OfferingRate | undefined>();
  for (const name of new Set([...sessions.values()].map((s) => s.offering)))
    offerings.set(name, await b.offerings(name));

  // Locks: per-session carries (session id order), then wallets (id order), as every writer does.
  const carries = await lockCarries(tx, [...sessions.keys()]);
  const owners = [...sessions.values()].flatMap(chainOwners);
  const locked = new Map((await lockWalletsOfOwners(tx, dedupe(owners))).map((w) => [w.id, w]));

  // Time of these sessions already charged: a sample over it is charged only for what is new.
  const coverage = Coverage.of(
    await billedPeriods(
      tx,
      [...sessions.keys()],
      samples.reduce((a, s) => (s.period_start < a ? s.period_start : a), (samples[0] as UnbilledSample).period_start),
      samples.reduce((a, s) => (s.period_end > a ? s.period_end : a), (samples[0] as UnbilledSample).period_end),
    ),
  );

  const byOwner = new Map([...locked.values()].map((w) => [walletKey(w), w]));
  const balances = new Map([...locked.values()].map((w) => [w.id, units(w.balance)]));
  // Read after the wallet locks: a concurrent biller's charges to these wallets are committed and count.
  const allowances = allowancesLeft(await walletAllowances(tx, [...locked.values()], now));

  // One audit row per charging transaction; every charge in it carries its request id.
  const batchId = `billing:${billingId("txn").slice(4)}`;
  const txns: NewTransaction[] = [];
  const touched = new Map<string, CarryRow>();
  const ordered = [...samples].sort(
    (x, y) =>
      cmp(x.session, y.session) || x.period_start.getTime() - y.period_start.getTime() || cmp(x.sample_id, y.sample_id),
  );
  for (const s of ordered) {
    const session = sessions.get(s.session);
    const base = {
      id: billingId("txn"),
      kind: "charge" as const,
      idempotencyKey: `usage:${s.cluster_id}:${s.sample_id}`,
      clusterId: s.cluster_id,
      sampleId: s.sample_id,
      sessionId: s.session,
      actorKind: "operator" as const,
      actorId: `operator:${s.cluster_id}`,
      requestId: batchId,
      at: now,
    };
    if (!session) {
      // A sample of a session we do not know: recorded as a zero charge, so it is accounted for once.
      txns.push({
        ...base,
        amount: 0n,
        legs: [],
        reason: "usage of an unknown session",
        metadata: { unbillable: "unknown_session" },
      });
      continue;
    }
    const carry = carries.get(session.id) as CarryRow;
    const rate = rateOf(session, offerings.get(session.offering));
    const [start, end] = [s.period_start.getTime(), s.period_end.getTime()];
    const fresh = coverage.uncovered(session.id, start, end);
    coverage.add(session.id, start, end);
    const ms = BigInt(fresh);
    const p = priceInterval({ carry: units(carry.carry), divisor: units(carry.carry_divisor) }, rate, ms);
    const next: CarryRow = {
      ...carry,
      carry: p.carry.toString(),
      carry_divisor: p.divisor.toString(),
      charged: (units(carry.charged) + p.amount).toString(),
      samples: carry.samples + 1,
    };
    carries.set(session.id, next);
    touched.set(session.id, next);
    const chain = chainOwners(session).flatMap((o) => byOwner.get(ownerKey(o)) ?? []);
    const { paid, shortfall } = drawFrom(chain, balances, p.amount, allowances);
    for (const x of paid) result.wallets.add(x.walletId);
    result.charged += p.amount;
    result.shortfall += shortfall;
    txns.push({
      ...base,
      amount: p.amount,
      organizationId: session.organization_id,
      legs: [
        ...paid.map((x) => ({ walletId: x.walletId, amount: -x.amount })),
        ...(shortfall > 0n ? [{ walletId: SHORTFALL_WALLET, amount: -shortfall }] : []),
        ...(p.amount > 0n ? [{ walletId: USAGE_WALLET, amount: p.amount }] : []),
      ],
      metadata: {
        ms: ms.toString(),
        ...(fresh < end - start ? { already_charged_ms: String(end - start - fresh) } : {}),
        rate_per_hour: rate.perHour.toString(),
        ...(rate.divisor !== 1n ? { rate_divisor: rate.divisor.toString() } : {}),
        offering: session.offering,
        // Which rate applied: the ledger tells a borrowed hour from a guaranteed one.
        rate_class: session.capacity_class ?? "guaranteed",
        ...(session.capacity_class === "borrowed"
          ? { rate_multiplier: String(permilleOf(session, offerings.get(session.offering)) / 1000) }
          : {}),
        ...(shortfall > 0n ? { shortfall: shortfall.toString() } : {}),
      },
    });
  }
  const { duplicates } = await insertTransactions(tx, txns, { onDuplicate: "fail" });
  // The samples were locked and unbilled, so a charge already in the ledger means a sample's billed_at
  // was lost — impossible short of manual edits. Refuse loudly rather than double-count carries.
  if (duplicates.length > 0) throw new Error(`charges already in the ledger for ${duplicates.length} unbilled samples`);
  await saveCarries(tx, [...touched.values()], now);
  await markSamplesBilled(tx, samples, now);
  await insertAuditRecord(tx, {
    action: "credits.charge",
    actorKind: "system",
    actorReason: "billing: usage charged",
    actorId: null,
    organizationId: null,
    targetKind: "usage_samples",
    targetId: null,
    requestId: batchId,
    outcome: "success",
    status: 200,
    details: {
      samples: samples.length,
      charged: result.charged.toString(),
      shortfall: result.shortfall.toString(),
      clusters: [...new Set(samples.map((x) => x.cluster_id))],
    },
    at: now,
  });
  return result;
}

function dedupe<T extends { organizationId: string | null; kind: string; id: string }>(owners: T[]): T[] {
  return [...new Map(owners.map((o) => [ownerKey(o), o])).values()];
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
