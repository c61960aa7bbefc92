import type { Knex } from "knex";

export interface WalletVisibility {
  all: boolean;
  /** Organizations whose every wallet the caller sees (org admins). */
  organizationIds: string[];
  /** Project wallets the caller sees (members and admins of the project). */
  projectIds: string[];
  /** User wallets of these users (the caller; members of projects it administers) in these organizations. */
  userWallets: { userId: string; organizationIds: string[] }[];
}

export interface WalletFilter {
  organizationId?: string;
  ownerKind?: string;
  ownerId?: string;
}

/** The wallets a caller may see, as a query to page (ordered). */
export function visibleWalletsQuery(db: Knex, v: WalletVisibility, f: WalletFilter): Knex.QueryBuilder {
  const q = db("wallets").select("*");
  if (!v.all) {
    q.where((w) => {
      w.whereRaw("false");
      if (v.organizationIds.length > 0) w.orWhereIn("organization_id", v.organizationIds);
      if (v.projectIds.length > 0) w.orWhere((p) => p.where("owner_kind", "project").whereIn("owner_id", v.projectIds));
      for (const u of v.userWallets) {
        if (u.organizationIds.length === 0) continue;
        w.orWhere((p) =>
          p.where({ owner_kind: "user", owner_id: u.userId }).whereIn("organization_id", u.organizationIds),
        );
      }
    });
  }
  // Filters narrow the caller's scope; one outside it answers an empty page, never 403.
  if (f.organizationId) q.where("organization_id", f.organizationId);
  if (f.ownerKind) q.where("owner_kind", f.ownerKind);
  if (f.ownerId) q.where("owner_id", f.ownerId);
  // The usage sink is an internal account: listed for nobody.
  q.whereNot("id", "wal_usage");
  return q.orderBy([
    { column: "organization_id", order: "asc", nulls: "first" },
    { column: "owner_kind" },
    { column: "id" },
  ]);
}
