// Fair share (docs/dev/fair-share.md): where each organization, project and user stands per GPU model, and
// the reclaim log. The API scopes both: a super_admin every organization, an organization admin theirs.
import type { QueryOf } from "../api/client.ts";
import { api } from "./context.ts";

export function loadFairShare(organizationId?: string, signal?: AbortSignal) {
  return api.call("getFairShare", { query: organizationId ? { organization_id: organizationId } : {} }, { signal });
}

export function loadCapacityReclaims(query: QueryOf<"listCapacityReclaims">, signal?: AbortSignal) {
  return api.call("listCapacityReclaims", { query }, { signal });
}
