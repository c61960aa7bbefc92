import type { MembershipRow } from "../../db/operations/memberships/types.ts";
import type { UserListRow, UserRow } from "../../db/operations/users/types.ts";
import { isoTimestamp } from "../../http/timestamp.ts";
import type { User, UserDetail } from "./schemas.ts";

export function presentUser(u: UserListRow): User {
  return {
    id: u.id,
    email: u.email,
    display_name: u.display_name,
    is_super_admin: u.is_super_admin,
    must_change_password: u.must_change_password,
    disabled: u.disabled,
    last_login_at: u.last_login_at ? isoTimestamp(u.last_login_at) : null,
    created_at: isoTimestamp(u.created_at),
    updated_at: isoTimestamp(u.updated_at),
  };
}

export function presentUserDetail(u: UserRow, memberships: MembershipRow[]): UserDetail {
  return {
    ...presentUser(u),
    memberships: memberships.map((m) => ({
      organization_id: m.organization_id,
      project_id: m.project_id,
      role: m.role,
    })),
  };
}
