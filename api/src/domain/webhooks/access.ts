// Webhooks are an organization admin's business: its org_admins and super_admins see and manage them.
// Members of the organization get 403 (they know it exists); anyone else 404 (existence not revealed).
import { findEndpoint } from "../../db/operations/webhooks/findEndpoint.ts";
import type { WebhookEndpointRow } from "../../db/operations/webhooks/types.ts";
import type { Deps } from "../../deps.ts";
import { Forbidden, NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { canAdminOrganization, canSeeOrganization, scopeOf } from "../identity/scope.ts";

export function assertAdmins(p: Principal, organizationId: string, kind = "organization", id = organizationId): void {
  const s = scopeOf(p);
  if (canAdminOrganization(s, organizationId)) return;
  if (!canSeeOrganization(s, organizationId)) throw new NotFound(kind, id);
  throw new Forbidden("only the organization's admins manage its webhooks");
}

/** The endpoint if the caller manages it; else 404 or 403 as above. */
export async function endpointFor(deps: Pick<Deps, "db">, p: Principal, id: string): Promise<WebhookEndpointRow> {
  const e = await findEndpoint(deps.db, id);
  if (!e) throw new NotFound("webhook", id);
  assertAdmins(p, e.organization_id, "webhook", id);
  return e;
}
