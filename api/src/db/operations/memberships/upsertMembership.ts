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
  return (await upsertMemberships(db, [k]))[0] as { row: MembershipRow; created: boolean };
}

/**
 * Many at once (a bulk import's chunk), in input order: one statement for the organizations' memberships,
 * then one for the projects' (each against its partial unique index). A key given twice in one list is
 * refused by Postgres (an upsert touches a row once per statement).
 */
export async function upsertMemberships(
  db: Knex,
  ks: readonly (MembershipKey & { role: MembershipRole })[],
): Promise<{ row: MembershipRow; created: boolean }[]> {
  const out = new Map<MembershipKey & { role: MembershipRole }, { row: MembershipRow; created: boolean }>();
  for (const inOrg of [true, false]) {
    const part = ks.filter((k) => (k.projectId === null) === inOrg);
    if (part.length === 0) continue;
    const target = inOrg
      ? "(user_id, organization_id) WHERE project_id IS NULL"
      : "(user_id, project_id) WHERE project_id IS NOT NULL";
    const { rows } = await db.raw(
      `INSERT INTO memberships (user_id, organization_id, project_id, role)
       SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[])
       ON CONFLICT ${target} DO UPDATE SET role = excluded.role, updated_at = now()
       RETURNING *, (xmax = 0) AS inserted`,
      [
        part.map((k) => k.userId),
        part.map((k) => k.organizationId),
        // Arrays with nulls are fine for node-postgres; knex's binding type does not say so.
        part.map((k) => k.projectId) as string[],
        part.map((k) => k.role),
      ],
    );
    const byKey = new Map(
      (rows as (MembershipRow & { inserted: boolean })[]).map((r) => [
        `${r.user_id}/${r.project_id ?? r.organization_id}`,
        r,
      ]),
    );
    for (const k of part) {
      const { inserted, ...row } = byKey.get(`${k.userId}/${k.projectId ?? k.organizationId}`) as MembershipRow & {
        inserted: boolean;
      };
      out.set(k, { row, created: inserted });
    }
  }
  for (const userId of new Set(ks.map((k) => k.userId))) identityChanged(db, userId);
  return ks.map((k) => out.get(k) as { row: MembershipRow; created: boolean });
}
