// The fleet's fair-share policy as the pure core reads it (controllers/src/fairshare/types.ts): the
// organization and project ResourcePolicies' `fairShare` fields become one ShareTree; user-scoped
// policies give users' weights within their organization's projects.
import type { FairShareSettings, OrgShare, ShareTree } from "@berth/controllers";
import type { ResourcePolicy } from "@berth/crds";
import { FAIR_SHARE_DEFAULTS } from "../sessions/capacityClass.ts";

/** Which organization each project belongs to: a project policy names only the project. */
export type ProjectOrgs = ReadonlyMap<string, string>;

export function shareTreeOf(policies: readonly ResourcePolicy[], projectOrgs: ProjectOrgs): ShareTree {
  const orgs = new Map<string, OrgShare>();
  const orgOf = (id: string): OrgShare => {
    let o = orgs.get(id);
    if (!o) {
      o = { org: id, projects: [] };
      orgs.set(id, o);
    }
    return o;
  };
  const quotas = (p: ResourcePolicy) =>
    p.spec.fairShare?.guarantees
      ? Object.fromEntries(
          p.spec.fairShare.guarantees.map((g) => [
            g.gpuModel,
            {
              guaranteed: g.gpus,
              ...(g.borrowingLimit !== undefined ? { borrowingLimit: g.borrowingLimit } : {}),
              ...(g.lendingLimit !== undefined ? { lendingLimit: g.lendingLimit } : {}),
            },
          ]),
        )
      : undefined;
  for (const p of policies) {
    const s = p.spec.scope;
    if (s.kind === "organization" && s.id) {
      const o = orgOf(s.id);
      const q = quotas(p);
      if (q) o.quotas = q;
      if (p.spec.fairShare?.weight !== undefined) o.weight = p.spec.fairShare.weight;
    }
  }
  for (const p of policies) {
    const s = p.spec.scope;
    if (s.kind !== "project" || !s.id) continue;
    const org = projectOrgs.get(s.id);
    if (!org) continue;
    const q = quotas(p);
    orgOf(org).projects?.push({
      project: s.id,
      ...(p.spec.fairShare?.weight !== undefined ? { weight: p.spec.fairShare.weight } : {}),
      ...(q ? { quotas: q } : {}),
    });
  }
  return { orgs: [...orgs.values()] };
}

/** The fleet-wide settings: the global policy's, then the defaults. */
export function settingsOf(policies: readonly ResourcePolicy[]): Partial<FairShareSettings> {
  const g = policies.find((p) => p.spec.scope.kind === "global")?.spec.fairShare;
  return {
    halfLifeMs: (g?.usageHalfLifeHours ?? FAIR_SHARE_DEFAULTS.usageHalfLifeHours) * 3_600_000,
    minRuntimeMs: (g?.minRuntimeSeconds ?? FAIR_SHARE_DEFAULTS.minRuntimeSeconds) * 1000,
  };
}
