import { Forbidden } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";

/** Clusters and nodes are fleet-wide: only super_admin changes them. */
export function requireSuperAdmin(principal: Principal, action: string): void {
  if (!principal.isSuperAdmin)
    throw new Forbidden(`only a super_admin may ${action}`, { required_role: "super_admin" });
}
