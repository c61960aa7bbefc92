// Who sees and who manages a wallet (docs/dev/billing.md, "Who may do what").
//
//   see      system: super_admin. organization: its org_admins. project: its members and admins, the
//            organization's admins. user: the user, the organization's admins, and the admins of a
//            project of that organization the user belongs to.
//   manage   (pay from it: allocations, approvals, refills; change its limits) system: super_admin.
//            organization: its org_admins. project: its project_admins and the organization's admins.
//            user: the organization's admins, and the admins of a project the user belongs to.
// Outside what one may see: 404 (existence is not revealed). Seen but not managed: 403.
import type { Knex } from "knex";
import { findWalletById } from "../../db/operations/ledger/findWallets.ts";
import { visibleWalletsQuery, type WalletVisibility } from "../../db/operations/ledger/listWallets.ts";
import type { WalletRow } from "../../db/operations/ledger/types.ts";
import { Forbidden, NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { scopeOf } from "../identity/scope.ts";
import { USAGE_WALLET } from "./ids.ts";

export interface WalletAccess {
  see: boolean;
  manage: boolean;
}

/** Is `userId` a member of one of `projectIds`? */
/** Whether the user is in one of the projects, counting only projects of `organizationId` (a person's
 * wallets are per organization: a project admin in A manages nothing of theirs in B). */
async function memberOfAny(
  db: Knex,
  userId: string,
  projectIds: string[],
  organizationId: string | null,
): Promise<boolean> {
  if (projectIds.length === 0 || organizationId === null) return false;
  const row = await db("memberships")
    .where({ user_id: userId, organization_id: organizationId })
    .whereIn("project_id", projectIds)
    .first("id");
  return row !== undefined;
}

export async function walletAccess(db: Knex, p: Principal, w: WalletRow): Promise<WalletAccess> {
  if (w.id === USAGE_WALLET) return { see: p.isSuperAdmin, manage: false };
  const s = scopeOf(p);
  if (s.all) return { see: true, manage: true };
  const orgAdmin = w.organization_id !== null && s.adminOrganizations.has(w.organization_id);
  if (orgAdmin) return { see: true, manage: true };
  switch (w.owner_kind) {
    case "system":
    case "organization":
      return { see: false, manage: false };
    case "project":
      return { see: s.projects.has(w.owner_id), manage: s.adminProjects.has(w.owner_id) };
    case "user": {
      const projectAdmin = await memberOfAny(db, w.owner_id, [...s.adminProjects], w.organization_id);
      return { see: w.owner_id === p.userId || projectAdmin, manage: projectAdmin };
    }
  }
}

/** The wallet if the caller sees it (else 404); `manage` asks for more (else 403). */
export async function walletFor(
  db: Knex,
  p: Principal,
  id: string,
  need: "see" | "manage" = "see",
): Promise<{ wallet: WalletRow; access: WalletAccess }> {
  const wallet = await findWalletById(db, id);
  if (!wallet) throw new NotFound("wallet", id);
  const access = await walletAccess(db, p, wallet);
  if (!access.see) throw new NotFound("wallet", id);
  if (need === "manage" && !access.manage) throw new Forbidden("you may not manage this wallet", { wallet_id: id });
  return { wallet, access };
}

/** What a wallet list shows the caller (its scope, as a query filter). */
export async function walletVisibility(db: Knex, p: Principal): Promise<WalletVisibility> {
  const s = scopeOf(p);
  if (s.all) return { all: true, organizationIds: [], projectIds: [], userWallets: [] };
  const adminProjects = [...s.adminProjects];
  const members = adminProjects.length
    ? ((await db("memberships").whereIn("project_id", adminProjects).select("user_id", "organization_id")) as {
        user_id: string;
        organization_id: string;
      }[])
    : [];
  const byUser = new Map<string, Set<string>>();
  for (const m of members) byUser.set(m.user_id, (byUser.get(m.user_id) ?? new Set()).add(m.organization_id));
  const mine = byUser.get(p.userId) ?? new Set<string>();
  for (const o of s.organizations) mine.add(o);
  byUser.set(p.userId, mine);
  return {
    all: false,
    organizationIds: [...s.adminOrganizations],
    projectIds: [...s.projects],
    userWallets: [...byUser].map(([userId, orgs]) => ({ userId, organizationIds: [...orgs] })),
  };
}

/** Ids of every wallet the caller sees (bounded by its scope; lists of movements filter on it). */
export async function visibleWalletIds(db: Knex, p: Principal): Promise<string[] | "all"> {
  const v = await walletVisibility(db, p);
  if (v.all) return "all";
  const rows = (await visibleWalletsQuery(db, v, {}).clearSelect().select("id")) as { id: string }[];
  return rows.map((r) => r.id);
}
