import type { Session } from "@berth/crds";
import type { Tenancy } from "../placement/types.ts";

/** Whom a session counts as for node-pool grants: its owner, its organization and its project. */
export function tenancyOf(s: Session): Tenancy {
  return {
    organization: s.spec.organization,
    ...(s.spec.project ? { project: s.spec.project } : {}),
    user: s.spec.owner,
  };
}
