// Who is calling: a user and their memberships, as every domain verb sees them. The route layer turns a
// bearer token into one (http/principal.ts' Authenticator); nothing here knows about HTTP.

export interface Membership {
  organizationId: string;
  /** Set for a project-level membership; absent for an organization-level one. */
  projectId?: string;
  /** e.g. "org_admin", "project_admin", "member" (the identity domain owns the list). */
  role: string;
}

export interface Principal {
  userId: string;
  email: string;
  isSuperAdmin: boolean;
  mustChangePassword: boolean;
  memberships: Membership[];
}

/**
 * Turns a bearer token (without the "Bearer " prefix) into a Principal. The first argument is the
 * caller's request context, which this domain never reads.
 */
export type TokenAuthenticator = (ctx: unknown, token: string) => Promise<Principal>;
