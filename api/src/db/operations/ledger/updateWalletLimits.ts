import type { Knex } from "knex";
import type { WalletRow } from "./types.ts";

export interface WalletLimits {
  overdraft?: bigint;
  maxSpendPerDay?: bigint | null;
  maxSpendPerMonth?: bigint | null;
  displayName?: string | null;
}

/** Changes a wallet's spec; forces a mirror of the resource (mirrored_sequence back to -1). */
export async function updateWalletLimits(
  db: Knex,
  id: string,
  l: WalletLimits,
  at: Date,
): Promise<WalletRow | undefined> {
  const patch: Record<string, unknown> = { updated_at: at, mirrored_sequence: -1 };
  if (l.overdraft !== undefined) patch.overdraft = l.overdraft.toString();
  if (l.maxSpendPerDay !== undefined)
    patch.max_spend_per_day = l.maxSpendPerDay === null ? null : l.maxSpendPerDay.toString();
  if (l.maxSpendPerMonth !== undefined)
    patch.max_spend_per_month = l.maxSpendPerMonth === null ? null : l.maxSpendPerMonth.toString();
  if (l.displayName !== undefined) patch.display_name = l.displayName;
  const rows = (await db("wallets").where({ id }).update(patch).returning("*")) as WalletRow[];
  return rows[0];
}
