import type { Knex } from "knex";
import type { WalletOwnerKind, WalletRow } from "./types.ts";

export async function findWalletById(db: Knex, id: string): Promise<WalletRow | undefined> {
  return (await db("wallets").where({ id }).first()) as WalletRow | undefined;
}

export interface WalletOwner {
  organizationId: string | null;
  kind: WalletOwnerKind;
  id: string;
}

/** Wallets of the given owners (missing ones are simply absent). */
export async function findWalletsByOwners(db: Knex, owners: readonly WalletOwner[]): Promise<WalletRow[]> {
  if (owners.length === 0) return [];
  return (await db("wallets").where((q) => {
    for (const o of owners)
      q.orWhere((w) => {
        if (o.organizationId === null) w.whereNull("organization_id");
        else w.where("organization_id", o.organizationId);
        w.where({ owner_kind: o.kind, owner_id: o.id });
      });
  })) as WalletRow[];
}
