import type { MemberRow } from "../../db/operations/memberships/types.ts";
import type { OrganizationRow } from "../../db/operations/organizations/types.ts";
import type { Member, Organization } from "./schemas.ts";

export function presentOrganization(o: OrganizationRow): Organization {
  return {
    id: o.id,
    name: o.name,
    slug: o.slug,
    created_at: o.created_at.toISOString(),
    updated_at: o.updated_at.toISOString(),
  };
}

export function presentMember(m: MemberRow): Member {
  return {
    user_id: m.user_id,
    email: m.email,
    display_name: m.display_name,
    organization_id: m.organization_id,
    project_id: m.project_id,
    role: m.role,
    created_at: new Date(m.created_at).toISOString(),
    updated_at: new Date(m.updated_at).toISOString(),
  };
}
