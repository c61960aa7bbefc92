// Wallet spend limits (`max_spend_per_day`, `max_spend_per_month`; Wallet spec.limits): the most a
// wallet pays for usage in a UTC day or month, by charging time. A wallet whose limit is reached is
// skipped and the next wallet in draw order pays (charge.ts); the door refuses a session its wallets
// cannot cover within their limits (door.ts); the running-out watch counts a wallet's allowance like
// its balance (runningOut.ts). Limits cap usage only: allocations out of a wallet are not spend.
import type { Knex } from "knex";
import { walletsSpend } from "../../db/operations/ledger/organizationSpend.ts";
import type { WalletRow } from "../../db/operations/ledger/types.ts";
import { max, units } from "./money.ts";
import { nextPeriodStart, periodStart } from "./periods.ts";

export type SpendLimitName = "maxSpendPerDay" | "maxSpendPerMonth";

/** What a limited wallet may still pay this period: the tighter of its limits, and which one that is. */
export interface Allowance {
  walletId: string;
  left: bigint;
  limit: SpendLimitName;
  value: bigint;
  spent: bigint;
  period: "daily" | "monthly";
  periodStart: Date;
  resetsAt: Date;
}

const hasLimit = (w: WalletRow) => w.max_spend_per_day !== null || w.max_spend_per_month !== null;

/**
 * Allowances of the wallets that have a limit (the others are absent: unlimited). One query, and none
 * when no wallet has a limit. Read after the wallets' locks when paying, so a concurrent biller's
 * charges are counted.
 */
export async function walletAllowances(
  db: Knex,
  wallets: readonly WalletRow[],
  now: Date,
): Promise<Map<string, Allowance>> {
  const limited = wallets.filter(hasLimit);
  if (limited.length === 0) return new Map();
  const day = periodStart("daily", now);
  const month = periodStart("monthly", now);
  const spend = await walletsSpend(
    db,
    limited.map((w) => w.id),
    { day, month },
  );
  const out = new Map<string, Allowance>();
  for (const w of limited) {
    const s = spend.get(w.id) ?? { day: 0n, month: 0n };
    const candidates: Allowance[] = [];
    if (w.max_spend_per_day !== null) {
      const value = units(w.max_spend_per_day);
      candidates.push({
        walletId: w.id,
        left: max(0n, value - s.day),
        limit: "maxSpendPerDay",
        value,
        spent: s.day,
        period: "daily",
        periodStart: day,
        resetsAt: nextPeriodStart("daily", day),
      });
    }
    if (w.max_spend_per_month !== null) {
      const value = units(w.max_spend_per_month);
      candidates.push({
        walletId: w.id,
        left: max(0n, value - s.month),
        limit: "maxSpendPerMonth",
        value,
        spent: s.month,
        period: "monthly",
        periodStart: month,
        resetsAt: nextPeriodStart("monthly", month),
      });
    }
    const tightest = candidates.reduce((a, c) => (c.left < a.left ? c : a));
    out.set(w.id, tightest);
  }
  return out;
}

/** Remaining allowances by wallet, as a mutable map for draws. */
export function allowancesLeft(a: ReadonlyMap<string, Allowance>): Map<string, bigint> {
  return new Map([...a].map(([id, x]) => [id, x.left]));
}
