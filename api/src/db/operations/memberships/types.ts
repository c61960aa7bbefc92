export type MembershipRole = "org_admin" | "project_admin" | "member";

export interface MembershipRow {
  id: string;
  user_id: string;
  organization_id: string;
  project_id: string | null;
  role: MembershipRole;
  created_at: Date;
  updated_at: Date;
}

/** A membership with the member's account fields, for the members sub-resources. */
export interface MemberRow extends MembershipRow {
  email: string;
  display_name: string | null;
}
