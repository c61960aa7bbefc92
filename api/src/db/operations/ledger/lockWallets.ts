import type { Knex } from "knex";
import type { WalletRow } from "./types.ts";

/**
 * Locks wallets for a movement, always in id order: every writer (charges, allocations, refills) takes
 * its wallet locks in the same order, so two of them wait for each other instead of deadlocking.
 */
export async function lockWallets(tx: Knex.Transaction, ids: readonly string[]): Promise<Map<string, WalletRow>> {
  const unique = [...new Set(ids)].sort();
  if (unique.length === 0) return new Map();
  const rows = (await tx("wallets").whereIn("id", unique).orderBy("id").forUpdate()) as WalletRow[];
  return new Map(rows.map((r) => [r.id, r]));
}
