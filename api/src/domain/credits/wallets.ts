// Which wallets exist for an owner, and which a session draws on.
//
// Draw order (docs/dev/billing.md): a session is charged to its owner's wallet in the session's
// organization first, then to its project's wallet, then to its organization's wallet, each down to its
// floor. The person's own credits go first, so an allocation to a person is theirs to spend; the shared
// pools behind them are used only when it runs dry. A wallet that does not exist is skipped.
import { organizationNamespace } from "@berth/crds";
import type { Knex } from "knex";
import { findWalletsByOwners, type WalletOwner } from "../../db/operations/ledger/findWallets.ts";
import { insertWallet, type NewWallet } from "../../db/operations/ledger/insertWallet.ts";
import type { WalletOwnerKind, WalletRow } from "../../db/operations/ledger/types.ts";
import { billingId } from "./ids.ts";

export interface SessionOwnership {
  owner_id: string;
  organization_id: string;
  project_id: string | null;
}

export function chainOwners(s: SessionOwnership): WalletOwner[] {
  return [
    { organizationId: s.organization_id, kind: "user", id: s.owner_id },
    ...(s.project_id ? [{ organizationId: s.organization_id, kind: "project" as const, id: s.project_id }] : []),
    { organizationId: s.organization_id, kind: "organization", id: s.organization_id },
  ];
}

export function ownerKey(o: { organizationId: string | null; kind: string; id: string }): string {
  return `${o.organizationId ?? ""}/${o.kind}/${o.id}`;
}

export function walletKey(w: Pick<WalletRow, "organization_id" | "owner_kind" | "owner_id">): string {
  return ownerKey({ organizationId: w.organization_id, kind: w.owner_kind, id: w.owner_id });
}

/** The session's wallets in draw order (those that exist). */
export async function walletChain(db: Knex, s: SessionOwnership): Promise<WalletRow[]> {
  const owners = chainOwners(s);
  const found = new Map((await findWalletsByOwners(db, owners)).map((w) => [walletKey(w), w]));
  return owners.flatMap((o) => found.get(ownerKey(o)) ?? []);
}

/** The Wallet resource of an owner: in its organization's namespace, named after the owner. */
export function walletResourceName(kind: Exclude<WalletOwnerKind, "system">, ownerId: string): string {
  const prefix = { user: "user", project: "project", organization: "organization" }[kind];
  return `${prefix}-${ownerId.toLowerCase().replace(/[^a-z0-9-]/g, "-")}`.slice(0, 253);
}

/** The row that makes an owner's wallet (ensureWallet; a bulk import makes a chunk's in one statement). */
export function newWalletOf(
  owner: { organizationId: string; kind: Exclude<WalletOwnerKind, "system">; id: string; displayName?: string | null },
  at: Date,
): NewWallet {
  return {
    id: billingId("wal"),
    organizationId: owner.organizationId,
    ownerKind: owner.kind,
    ownerId: owner.id,
    displayName: owner.displayName ?? null,
    crNamespace: organizationNamespace(owner.organizationId),
    crName: walletResourceName(owner.kind, owner.id),
    at,
  };
}

export async function ensureWallet(
  db: Knex,
  owner: { organizationId: string; kind: Exclude<WalletOwnerKind, "system">; id: string; displayName?: string | null },
  at: Date,
): Promise<{ wallet: WalletRow; created: boolean }> {
  return insertWallet(db, newWalletOf(owner, at));
}
