import type { Knex } from "knex";
import { identityChanged } from "../users/identityChanged.ts";
import type { MembershipRole, MembershipRow } from "./types.ts";

export interface MembershipKey {
  userId: string;
  organizationId: string;
  /** null: a membership of the organization itself. */
  projectId: string | null;
}

/**
 * Adds the membership or changes its role; `created` tells which. One statement against the partial
 * unique indexes, so two concurrent adds of the same member cannot both insert.
 */
export async function upsertMembership(
  db: Knex,
  k: MembershipKey & { role: MembershipRole },
): Promise<{ row: MembershipRow; created: boolean }> {
  const target =
    k.projectId === null
      ? "(user_id, organization_id) WHERE project_id IS NULL"
      : "(user_id, project_id) WHERE project_id IS NOT NULL";
  const { rows } = await db.raw(
    `INSERT INTO memberships (user_id, organization_id, project_id, role) VALUES (?, ?, ?, ?)
     ON CONFLICT ${target} DO UPDATE SET role = excluded.role, updated_at = now()
     RETURNING *, (xmax = 0) AS inserted`,
    [k.userId, k.organizationId, k.projectId, k.role],
  );
  identityChanged(db, k.userId);
  const { inserted, ...row } = rows[0] as MembershipRow & { inserted: boolean };
  return { row, created: inserted };
}
