// Wallet verbs for the REST API: list, read, open, change limits, read the ledger.

import { type LedgerFilter, walletLedgerQuery } from "../../db/operations/ledger/listWalletLedger.ts";
import { visibleWalletsQuery, type WalletFilter } from "../../db/operations/ledger/listWallets.ts";
import type { WalletLedgerLine, WalletRow } from "../../db/operations/ledger/types.ts";
import { updateWalletLimits } from "../../db/operations/ledger/updateWalletLimits.ts";
import { findProjectById } from "../../db/operations/projects/findProjectById.ts";
import { type PagedBody, paginate } from "../../db/paging.ts";
import { CHECK_VIOLATION, sqlState } from "../../db/sqlstate.ts";
import type { Deps } from "../../deps.ts";
import { Conflict, Forbidden, Invalid, NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { canAdminOrganization, canSeeOrganization, scopeOf } from "../identity/scope.ts";
import { walletFor, walletVisibility } from "./access.ts";
import { ensureWallet } from "./wallets.ts";

export async function listWallets<Out>(
  deps: Pick<Deps, "db">,
  p: Principal,
  q: {
    page: number;
    size: number;
    organization?: string | undefined;
    owner_kind?: string | undefined;
    owner_id?: string | undefined;
  },
  present: (w: WalletRow) => Out,
): Promise<PagedBody<Out>> {
  const s = scopeOf(p);
  // A filter outside the caller's scope is ignored: the scope is answered (docs/dev/identity.md).
  const f: WalletFilter = {};
  if (q.organization && canSeeOrganization(s, q.organization)) f.organizationId = q.organization;
  if (q.owner_kind) f.ownerKind = q.owner_kind;
  if (q.owner_id) f.ownerId = q.owner_id;
  const v = await walletVisibility(deps.db, p);
  return paginate(deps.db, visibleWalletsQuery(deps.db, v, f), { page: q.page, size: q.size }, present);
}

export async function getWallet(deps: Pick<Deps, "db">, p: Principal, id: string): Promise<WalletRow> {
  return (await walletFor(deps.db, p, id)).wallet;
}

export interface OpenWalletInput {
  organizationId: string;
  ownerKind: "organization" | "project" | "user";
  ownerId?: string | undefined;
  displayName?: string | undefined;
}

/** Opens an owner's wallet (the organization's admins; super_admin). An existing one is answered as is. */
export async function openWallet(
  deps: Pick<Deps, "db" | "clock">,
  p: Principal,
  input: OpenWalletInput,
): Promise<{ wallet: WalletRow; created: boolean }> {
  const s = scopeOf(p);
  if (!canSeeOrganization(s, input.organizationId)) throw new NotFound("organization", input.organizationId);
  if (!canAdminOrganization(s, input.organizationId))
    throw new Forbidden("only the organization's admins open wallets");
  const org = await deps.db("organizations").where({ id: input.organizationId }).first("id");
  if (!org) throw new NotFound("organization", input.organizationId);
  let ownerId = input.ownerId;
  const bad = (message: string) =>
    new Invalid("the request is invalid", [{ path: ["body", "owner_id"], message, code: "invalid_reference" }]);
  if (input.ownerKind === "organization") {
    if (ownerId !== undefined && ownerId !== input.organizationId)
      throw bad("an organization's wallet is owned by the organization itself");
    ownerId = input.organizationId;
  } else if (!ownerId) {
    throw bad("name the owner");
  } else if (input.ownerKind === "project") {
    const project = await findProjectById(deps.db, ownerId);
    if (!project || project.organization_id !== input.organizationId) throw bad("no such project in this organization");
  } else {
    const member = await deps
      .db("memberships")
      .where({ user_id: ownerId, organization_id: input.organizationId })
      .first("id");
    if (!member) throw bad("no such member of this organization");
  }
  return ensureWallet(
    deps.db,
    {
      organizationId: input.organizationId,
      kind: input.ownerKind,
      id: ownerId,
      displayName: input.displayName ?? null,
    },
    deps.clock.now(),
  );
}

export interface WalletChange {
  displayName?: string | null | undefined;
  overdraft?: bigint | undefined;
  maxSpendPerDay?: bigint | null | undefined;
  maxSpendPerMonth?: bigint | null | undefined;
}

/** Limits: the wallet's managers; the overdraft (credit nobody pays for) only a super_admin. */
export async function changeWallet(
  deps: Pick<Deps, "db" | "clock">,
  p: Principal,
  id: string,
  c: WalletChange,
): Promise<WalletRow> {
  const { wallet } = await walletFor(deps.db, p, id, "manage");
  if (c.overdraft !== undefined && !p.isSuperAdmin) throw new Forbidden("only super_admins grant an overdraft");
  if (wallet.owner_kind === "system") throw new Forbidden("the platform accounts have no limits to change");
  try {
    const row = await updateWalletLimits(
      deps.db,
      wallet.id,
      {
        ...(c.displayName !== undefined ? { displayName: c.displayName } : {}),
        ...(c.overdraft !== undefined ? { overdraft: c.overdraft } : {}),
        ...(c.maxSpendPerDay !== undefined ? { maxSpendPerDay: c.maxSpendPerDay } : {}),
        ...(c.maxSpendPerMonth !== undefined ? { maxSpendPerMonth: c.maxSpendPerMonth } : {}),
      },
      deps.clock.now(),
    );
    if (!row) throw new NotFound("wallet", id);
    return row;
  } catch (err) {
    if (sqlState(err) === CHECK_VIOLATION)
      throw new Conflict("the balance is below the floor this overdraft would set; top the wallet up first", {
        balance: wallet.balance,
      });
    throw err;
  }
}

export async function walletLedger<Out>(
  deps: Pick<Deps, "db">,
  p: Principal,
  id: string,
  q: { page: number; size: number } & LedgerFilter,
  present: (l: WalletLedgerLine) => Out,
): Promise<PagedBody<Out>> {
  const { wallet } = await walletFor(deps.db, p, id);
  return paginate(deps.db, walletLedgerQuery(deps.db, wallet.id, q), { page: q.page, size: q.size }, present);
}
