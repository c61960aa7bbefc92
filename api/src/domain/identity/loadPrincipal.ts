// Loads what a Principal needs in one round trip: the user and all its memberships.
import type { Knex } from "knex";
import type { Membership, Principal } from "./principal.ts";

export interface PrincipalRecord {
  principal: Principal;
  disabled: boolean;
  tokenVersion: number;
}

const SELECT = `SELECT u.id, u.email, u.is_super_admin, u.must_change_password, u.disabled, u.token_version,
            coalesce(json_agg(json_build_object('organization_id', m.organization_id, 'project_id', m.project_id, 'role', m.role)
                              ORDER BY m.id) FILTER (WHERE m.id IS NOT NULL), '[]') AS memberships
       FROM users u LEFT JOIN memberships m ON m.user_id = u.id`;

interface Row {
  id: string;
  email: string;
  is_super_admin: boolean;
  must_change_password: boolean;
  disabled: boolean;
  token_version: number;
  memberships: { organization_id: string; project_id: string | null; role: string }[];
}

export async function loadPrincipal(db: Knex, userId: string): Promise<PrincipalRecord | undefined> {
  const { rows } = await db.raw(`${SELECT} WHERE u.id = ? GROUP BY u.id`, [userId]);
  const r = rows[0] as Row | undefined;
  return r ? recordOf(r) : undefined;
}

/** Several users in one round trip (the principal cache's batched misses); an unknown id is absent. */
export async function loadPrincipals(db: Knex, userIds: readonly string[]): Promise<Map<string, PrincipalRecord>> {
  const { rows } = await db.raw(`${SELECT} WHERE u.id = ANY(?) GROUP BY u.id`, [userIds as string[]]);
  return new Map((rows as Row[]).map((r) => [r.id, recordOf(r)]));
}

function recordOf(r: Row): PrincipalRecord {
  const memberships: Membership[] = r.memberships.map((m) =>
    m.project_id === null
      ? { organizationId: m.organization_id, role: m.role }
      : { organizationId: m.organization_id, projectId: m.project_id, role: m.role },
  );
  return {
    principal: {
      userId: r.id,
      email: r.email,
      isSuperAdmin: r.is_super_admin,
      mustChangePassword: r.must_change_password,
      memberships,
    },
    disabled: r.disabled,
    tokenVersion: r.token_version,
  };
}
