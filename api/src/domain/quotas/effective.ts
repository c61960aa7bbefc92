// A caller's effective limits at a place (organization, optionally a project): each limit's value, the
// policy it comes from (the narrowest that sets it: the caller's user-scoped policy there, the project's,
// the organization's, the global one), what is in use against it and the headroom. Read fresh from the
// management cluster (not the sessions' few-seconds cache), so an approval shows at once.
import { type ResourcePolicy, ResourcePolicyKind } from "@berth/crds";
import type { Knex } from "knex";
import { findProjectById } from "../../db/operations/projects/findProjectById.ts";
import { countLiveForOwner } from "../../db/operations/sessions/countLiveForOwner.ts";
import { provisionedByOwner } from "../../db/operations/volumes/provisioned.ts";
import type { Deps } from "../../deps.ts";
import { Invalid, NotFound } from "../../errors.ts";
import { type LimitSite, policiesAt } from "../catalog/policyChain.ts";
import { RECLAIM_DEFAULTS, type ReclaimPolicy, reclaimPolicyOf } from "../catalog/reclaimPolicy.ts";
import { catalogClient, listObjects } from "../catalog/store.ts";
import type { Principal } from "../identity/principal.ts";
import { canSeeProject, scopeOf } from "../identity/scope.ts";
import { effectiveLimit, liveGpusOf } from "../sessions/checkQuota.ts";
import {
  ALL_LIMITS,
  IDLE_LIMIT_NAMES,
  isIdleLimit,
  LIMIT_NAMES,
  type LimitName,
  type RequestScope,
  requestScopeOf,
} from "./limits.ts";

export interface EffectiveLimit {
  name: LimitName;
  /** null: no policy sets it (no limit). */
  value: number | null;
  /** In use against it; null where the limit is per session (hours) or not a count (priority). */
  used: number | null;
  headroom: number | null;
  policy: string | null;
  scope: string | null;
  /** Whom a quota request for this limit would raise; null: not requestable. */
  requestable: RequestScope | null;
}

export interface Effective {
  userId: string;
  organizationId: string;
  projectId: string | null;
  limits: EffectiveLimit[];
  allowedOfferings: { value: string[] | null; policy: string | null };
  /** The idle and running-time rules a session created here runs under, and the bounds of its own asks. */
  idle: ReclaimPolicy;
}

/** Every ResourcePolicy, fresh. */
export async function readPolicies(deps: Pick<Deps, "kube">): Promise<ResourcePolicy[]> {
  const items = await listObjects(catalogClient(deps.kube), ResourcePolicyKind as never);
  return items.flatMap((i) => {
    const r = ResourcePolicyKind.schema.safeParse(i);
    return r.success ? [r.data] : [];
  });
}

/** Checks the caller may look at this place: a member of the organization (or super_admin), a project they see. */
export async function placeOf(
  deps: Pick<Deps, "db">,
  p: Principal,
  organizationId: string | undefined,
  projectId: string | undefined,
): Promise<{ organizationId: string; projectId: string | null }> {
  const s = scopeOf(p);
  let org = organizationId;
  if (org === undefined) {
    // One organization: it is the default. Several: the caller names one.
    if (s.organizations.size !== 1)
      throw new Invalid("name the organization", [
        {
          path: ["query", "organization_id"],
          message: "required when you belong to several organizations, or to none",
          // A rule on the caller's memberships, not on the request's shape (no schema can state it).
          code: "custom",
        },
      ]);
    [org] = [...s.organizations] as [string];
  }
  if (!s.all && !s.organizations.has(org)) throw new NotFound("organization", org);
  if (projectId === undefined) return { organizationId: org, projectId: null };
  const project = await findProjectById(deps.db, projectId);
  if (!project || project.organization_id !== org || !canSeeProject(s, project))
    throw new NotFound("project", projectId);
  return { organizationId: org, projectId };
}

/** What is in use against one limit (null where that is no count). */
async function usedOf(db: Knex, name: LimitName, site: Required<LimitSite>): Promise<number | null> {
  switch (name) {
    case "max_gpus_per_user":
      return (await countLiveForOwner(db, site.userId)).gpus;
    case "max_concurrent_sessions_per_user":
      return (await countLiveForOwner(db, site.userId)).sessions;
    case "max_volume_gb_per_user":
      return provisionedByOwner(db, "user", site.userId);
    case "max_gpus_per_project":
      return site.projectId ? liveGpusOf(db, { column: "project_id", id: site.projectId }) : null;
    case "max_volume_gb_per_project":
      return site.projectId ? provisionedByOwner(db, "project", site.projectId) : null;
    case "max_gpus_per_organization":
      return liveGpusOf(db, { column: "organization_id", id: site.organizationId });
    default:
      return null;
  }
}

/** A limit's value and where it comes from; an idle limit no policy sets is the built-in default's. */
export function limitAt(
  policies: readonly ResourcePolicy[],
  name: LimitName,
  site: LimitSite,
): { value: number; scope: string; policy: string | null } | undefined {
  if (!isIdleLimit(name)) return effectiveLimit(policies, LIMIT_NAMES[name], site);
  const key = IDLE_LIMIT_NAMES[name];
  for (const [p, scope] of policiesAt(policies, site)) {
    const v = p.spec.idle?.[key];
    if (v !== undefined) return { value: v, scope, policy: p.metadata.name as string };
  }
  return { value: RECLAIM_DEFAULTS[key], scope: "default", policy: null };
}

export async function effectiveFor(
  deps: Pick<Deps, "db" | "kube">,
  userId: string,
  place: { organizationId: string; projectId: string | null },
  policies?: readonly ResourcePolicy[],
): Promise<Effective> {
  const all = policies ?? (await readPolicies(deps));
  const site = { ...place, userId };
  const limits: EffectiveLimit[] = [];
  for (const name of ALL_LIMITS) {
    // Project limits mean nothing without a project.
    if ((name === "max_gpus_per_project" || name === "max_volume_gb_per_project") && !place.projectId) continue;
    const l = limitAt(all, name, site);
    const used = await usedOf(deps.db, name, site as Required<LimitSite>);
    limits.push({
      name,
      value: l?.value ?? null,
      used,
      headroom: l && used !== null ? Math.max(0, l.value - used) : null,
      policy: l?.policy ?? null,
      scope: l?.scope ?? null,
      requestable: requestScopeOf(name),
    });
  }
  const lists = policiesAt(all, site).find(([p]) => p.spec.allowedOfferings !== undefined);
  return {
    userId,
    organizationId: place.organizationId,
    projectId: place.projectId,
    limits,
    allowedOfferings: {
      value: lists?.[0].spec.allowedOfferings ?? null,
      policy: (lists?.[0].metadata.name as string | undefined) ?? null,
    },
    idle: reclaimPolicyOf(all, site),
  };
}
