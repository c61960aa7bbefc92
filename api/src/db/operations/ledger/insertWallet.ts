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
  const [made] = await insertWallets(db, [w]);
  if (made) return { wallet: made, created: true };
  const existing = (await db("wallets")
    .where({ organization_id: w.organizationId, owner_kind: w.ownerKind, owner_id: w.ownerId })
    .first()) as WalletRow;
  return { wallet: existing, created: false };
}

/** Creates the wallets whose owners have none, in one statement; answers those it made. */
export async function insertWallets(db: Knex, ws: readonly NewWallet[]): Promise<WalletRow[]> {
  if (ws.length === 0) return [];
  const col = <T>(f: (w: NewWallet) => T) => ws.map(f);
  const r = (await db.raw(
    `INSERT INTO wallets (id, organization_id, owner_kind, owner_id, display_name, overdraft, balance, cr_namespace, cr_name, created_at, updated_at)
     SELECT id, org, kind, owner, name, overdraft, 0, ns, cr, at, at
       FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::text[], ?::text[], ?::timestamptz[])
         AS w(id, org, kind, owner, name, overdraft, ns, cr, at)
     ON CONFLICT (coalesce(organization_id, ''), owner_kind, owner_id) DO NOTHING
     RETURNING *`,
    [
      col((w) => w.id),
      col((w) => w.organizationId),
      col((w) => w.ownerKind),
      col((w) => w.ownerId),
      col((w) => w.displayName ?? null),
      col((w) => (w.overdraft ?? 0n).toString()),
      col((w) => w.crNamespace),
      col((w) => w.crName),
      col((w) => w.at),
    ] as unknown as string[],
  )) as { rows: WalletRow[] };
  return r.rows;
}
