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

/** Finds and locks the wallets of these owners (those that exist), in id order, in one statement. */
export async function lockWalletsOfOwners(
  tx: Knex.Transaction,
  owners: readonly { organizationId: string | null; kind: string; id: string }[],
): Promise<WalletRow[]> {
  if (owners.length === 0) return [];
  const r = (await tx.raw(
    `SELECT w.* FROM wallets w
       JOIN (SELECT unnest(?::text[]) AS org, unnest(?::text[]) AS kind, unnest(?::text[]) AS owner) o
         ON coalesce(w.organization_id, '') = o.org AND w.owner_kind = o.kind AND w.owner_id = o.owner
      ORDER BY w.id FOR UPDATE OF w`,
    [owners.map((o) => o.organizationId ?? ""), owners.map((o) => o.kind), owners.map((o) => o.id)],
  )) as { rows: WalletRow[] };
  return r.rows;
}
