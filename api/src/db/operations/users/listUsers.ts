import type { Knex } from "knex";
import { selectPage } from "../../page.ts";
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

export async function listUsers(db: Knex, q: ListUsersQuery): Promise<{ rows: UserListRow[]; total: number }> {
  const base = db("users");
  const v = q.visibleTo;
  if (v) {
    base.where((w) => {
      w.where("users.id", v.selfId).orWhereExists(
        db("memberships")
          .whereRaw("memberships.user_id = users.id")
          .where((m) => {
            m.whereIn("memberships.organization_id", v.adminOrganizationIds).orWhereIn(
              "memberships.project_id",
              v.adminProjectIds,
            );
          }),
      );
    });
  }
  if (q.organizationId) {
    base.whereExists(
      db("memberships")
        .whereRaw("memberships.user_id = users.id")
        .where("memberships.organization_id", q.organizationId),
    );
  }
  if (q.projectId) {
    base.whereExists(
      db("memberships").whereRaw("memberships.user_id = users.id").where("memberships.project_id", q.projectId),
    );
  }
  if (q.emailPrefix) base.whereRaw("users.email like ? escape '\\'", [`${escapeLike(q.emailPrefix.toLowerCase())}%`]);

  // Only what the list presents (never the password hash): less for Postgres to send and pg to parse.
  base
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
  return selectPage<UserListRow>(db, base, q);
}
