import type { Knex } from "knex";
import type { WalletOwnerKind, WalletRow } from "./types.ts";

export interface NewWallet {
  id: string;
  organizationId: string;
  ownerKind: Exclude<WalletOwnerKind, "system">;
  ownerId: string;
  displayName?: string | null;
  overdraft?: bigint;
  crNamespace: string;
  crName: string;
  at: Date;
}

/** Creates the owner's wallet unless it exists; answers the wallet either way (`created` says which). */
export async function insertWallet(db: Knex, w: NewWallet): Promise<{ wallet: WalletRow; created: boolean }> {
  const rows = (await db.raw(
    `INSERT INTO wallets (id, organization_id, owner_kind, owner_id, display_name, overdraft, balance, cr_namespace, cr_name, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)
     ON CONFLICT (coalesce(organization_id, ''), owner_kind, owner_id) DO NOTHING
     RETURNING *`,
    [
      w.id,
      w.organizationId,
      w.ownerKind,
      w.ownerId,
      w.displayName ?? null,
      (w.overdraft ?? 0n).toString(),
      w.crNamespace,
      w.crName,
      w.at,
      w.at,
    ],
  )) as { rows: WalletRow[] };
  if (rows.rows[0]) return { wallet: rows.rows[0], created: true };
  const existing = (await db("wallets")
    .where({ organization_id: w.organizationId, owner_kind: w.ownerKind, owner_id: w.ownerId })
    .first()) as WalletRow;
  return { wallet: existing, created: false };
}
