// A copy of an organization's wallet balances, their spend allowances and its budget left, from which
// the door and the running-out watch draw what sessions would cost, in draw order, as charging would
// (each wallet down to its floor and within its allowance; the budget caps the total). Pure: the
// ledger is not touched.
import type { WalletRow } from "../../db/operations/ledger/types.ts";
import { spendable } from "./ledger.ts";
import { min } from "./money.ts";

export interface Pool {
  balances: Map<string, bigint>;
  /** What each wallet with a spend limit may still pay this period; absent: unlimited. */
  allowances: Map<string, bigint>;
  /** The organization's budget left this period; null: no budget. */
  budget: bigint | null;
}

/** What a wallet can give from the pool: down to its floor, and (unless told) within its allowance. */
export function canGive(pool: Pool, w: WalletRow, o: { limits?: boolean } = {}): bigint {
  const floor = spendable({ ...w, balance: (pool.balances.get(w.id) ?? 0n).toString() });
  const allowance = o.limits === false ? undefined : pool.allowances.get(w.id);
  return allowance === undefined ? floor : min(floor, allowance);
}

/** What a chain can give: by balances alone, and within the wallets' limits too. */
export function capacity(pool: Pool, chain: readonly WalletRow[]): { credits: bigint; withinLimits: bigint } {
  let credits = 0n;
  let withinLimits = 0n;
  for (const w of chain) {
    credits += canGive(pool, w, { limits: false });
    withinLimits += canGive(pool, w);
  }
  return { credits, withinLimits };
}

/** Takes up to `amount` from the chain in draw order, within limits and the budget; answers what it took. */
export function takeUpTo(pool: Pool, chain: readonly WalletRow[], amount: bigint): bigint {
  let left = pool.budget === null ? amount : min(amount, pool.budget > 0n ? pool.budget : 0n);
  let took = 0n;
  for (const w of chain) {
    if (left === 0n) break;
    const t = min(left, canGive(pool, w));
    if (t === 0n) continue;
    pool.balances.set(w.id, (pool.balances.get(w.id) ?? 0n) - t);
    const a = pool.allowances.get(w.id);
    if (a !== undefined) pool.allowances.set(w.id, a - t);
    left -= t;
    took += t;
  }
  if (pool.budget !== null) pool.budget -= took;
  return took;
}

export type ShortOf = "credits" | "limits" | "organizationBudget";

/** Why a chain cannot give `amount` from the pool (balances first, then limits, then the budget), or null. */
export function shortOf(pool: Pool, chain: readonly WalletRow[], amount: bigint): ShortOf | null {
  const c = capacity(pool, chain);
  if (c.credits < amount) return "credits";
  if (c.withinLimits < amount) return "limits";
  if (pool.budget !== null && pool.budget < amount) return "organizationBudget";
  return null;
}

/** The first wallet of the chain whose allowance holds back credits its balance has. */
export function bindingLimit(pool: Pool, chain: readonly WalletRow[]): WalletRow | undefined {
  return chain.find((w) => canGive(pool, w) < canGive(pool, w, { limits: false }));
}
