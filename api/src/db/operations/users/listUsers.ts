import type { Knex } from "knex";
import { selectPage } from "../../page.ts";
import type { UserRow, UserVisibility } from "./types.ts";

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

export async function listUsers(db: Knex, q: ListUsersQuery): Promise<{ rows: UserRow[]; total: number }> {
  const base = db<UserRow>("users");
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

  base.select("users.*").orderBy([{ column: "users.created_at" }, { column: "users.id" }]);
  return selectPage<UserRow>(db, base, q);
}
