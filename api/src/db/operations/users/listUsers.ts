import type { Knex } from "knex";
import { pageQuery } from "../../page.ts";
import type { UserListRow, UserVisibility } from "./types.ts";

export interface ListUsersQuery {
  /** Absent: every user (super_admin). */
  visibleTo?: UserVisibility;
  organizationId?: string;
  projectId?: string;
  emailPrefix?: string;
  limit: number;
  offset: number;
}

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

type UsersPageParams = {
  selfId?: string;
  adminOrganizationIds?: readonly string[];
  adminProjectIds?: readonly string[];
  organizationId?: string;
  projectId?: string;
  /** A LIKE pattern, already escaped. */
  emailLike?: string;
};

// Compiled once per shape of its parameters (db/page.ts, pageQuery): it may read `p` only as values.
const usersPage = pageQuery<UserListRow, UsersPageParams>("users", (db, p) => {
  const base = db("users");
  const { selfId, adminOrganizationIds = [], adminProjectIds = [] } = p;
  if (selfId) {
    base.where((w) => {
      w.where("users.id", selfId).orWhereExists(
        db("memberships")
          .whereRaw("memberships.user_id = users.id")
          .where((m) => {
            m.whereIn("memberships.organization_id", adminOrganizationIds).orWhereIn(
              "memberships.project_id",
              adminProjectIds,
            );
          }),
      );
    });
  }
  if (p.organizationId) {
    base.whereExists(
      db("memberships")
        .whereRaw("memberships.user_id = users.id")
        .where("memberships.organization_id", p.organizationId),
    );
  }
  if (p.projectId) {
    base.whereExists(
      db("memberships").whereRaw("memberships.user_id = users.id").where("memberships.project_id", p.projectId),
    );
  }
  if (p.emailLike) base.whereRaw("users.email like ? escape '\\'", [p.emailLike]);

  // Only what the list presents (never the password hash): less for Postgres to send and pg to parse.
  return base
    .select(
      "users.id",
      "users.email",
      "users.display_name",
      "users.must_change_password",
      "users.is_super_admin",
      "users.disabled",
      "users.last_login_at",
      "users.created_at",
      "users.updated_at",
    )
    .orderBy([{ column: "users.created_at" }, { column: "users.id" }]);
});

export async function listUsers(db: Knex, q: ListUsersQuery): Promise<{ rows: UserListRow[]; total: number }> {
  const v = q.visibleTo;
  return usersPage(
    db,
    {
      selfId: v?.selfId,
      adminOrganizationIds: v?.adminOrganizationIds,
      adminProjectIds: v?.adminProjectIds,
      organizationId: q.organizationId || undefined,
      projectId: q.projectId || undefined,
      emailLike: q.emailPrefix ? `${escapeLike(q.emailPrefix.toLowerCase())}%` : undefined,
    },
    q,
  );
}
