// Where each organization and project stands (docs/dev/fair-share.md), for administrators: per GPU model
// the guarantee, what it uses of it, what it borrows beyond it, what of its unused guarantee others borrow
// (lent), its weighted fair share of the fleet and its decayed usage against it; within a project, its
// users (equal weights: the share tree has no user weights yet). And the reclaim log.
// Scope, not 403: a super_admin reads every organization, an organization admin theirs, anyone else none;
// the reclaim log also shows a person the reclaims of their own sessions.
import { decayedUsage, resolveSettings } from "@berth/controllers";
import { gpuOccupancy, shareOfRow } from "@berth/crds";
import type { Knex } from "knex";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import type { Deps } from "../../deps.ts";
import type { Principal } from "../identity/principal.ts";
import { scopeOf } from "../identity/scope.ts";
import { sessionsRuntimeOf } from "../sessions/runtime.ts";
import { fleetGpus, projectOrganizations } from "./guarantees.ts";
import { settingsOf, shareTreeOf } from "./tree.ts";
import { usageIntervals } from "./usage.ts";

export interface ModelStanding {
  gpuModel: string;
  guaranteed: number;
  used: number;
  borrowed: number;
  lent: number;
}

export interface Standing {
  id: string;
  name: string;
  weight: number;
  /** Its weight's fraction among its siblings (organizations; projects of one organization). */
  fairShare: number;
  /** Its fraction of the siblings' decayed usage (half-life of the policy). */
  usageShare: number;
  /** usageShare ÷ fairShare: above 1 it uses more than its fair share. */
  weightedShare: number;
  /** Card-hours decayed with the policy's half-life: what the fair order weighs. */
  decayedUsage: number;
  models: ModelStanding[];
  projects?: Standing[];
  users?: Standing[];
}

const HOLDING = ["Starting", "Resuming", "Running", "Restarting", "Pausing"];
const frac = (x: number, total: number) => (total > 0 ? x / total : 0);

export async function fairShareStanding(
  deps: Deps,
  principal: Principal,
  organizationId?: string,
): Promise<{ asOf: Date; capacity: Record<string, number>; organizations: Standing[] }> {
  const now = deps.clock.now();
  const scope = scopeOf(principal);
  const [policies, projectOrgs, capacity, orgRows, projectRows, holding, userRows] = await Promise.all([
    sessionsRuntimeOf(deps).catalog.policies(),
    projectOrganizations(deps),
    fleetGpus(deps),
    deps.db("organizations").select("id", "name") as Promise<{ id: string; name: string }[]>,
    deps.db("projects").select("id", "name", "organization_id") as Promise<
      { id: string; name: string; organization_id: string }[]
    >,
    deps.db("sessions").whereIn("phase", HOLDING).whereNotNull("cluster_id") as Promise<SessionRow[]>,
    deps.db("users").select("id", "email", "display_name") as Promise<
      { id: string; email: string; display_name: string | null }[]
    >,
  ]);
  const userName = new Map(userRows.map((u) => [u.id, u.display_name || u.email]));
  const tree = shareTreeOf(policies, projectOrgs);
  const settings = resolveSettings(settingsOf(policies));
  const usage = decayedUsage(
    await usageIntervals(deps.db, now, settings.halfLifeMs),
    now.toISOString(),
    settings.halfLifeMs,
  );
  const visible = orgRows.filter(
    (o) =>
      (scope.all || scope.adminOrganizations.has(o.id)) && (organizationId === undefined || o.id === organizationId),
  );
  const orgIds = new Set([...tree.orgs.map((o) => o.org), ...holding.map((r) => r.organization_id)]);
  const weightOf = (id: string) => tree.orgs.find((o) => o.org === id)?.weight ?? 1;
  const totalWeight = [...orgIds].reduce((s, id) => s + weightOf(id), 0);
  const totalUsage = Object.values(usage.orgs).reduce((s, x) => s + x, 0);
  const models = [...new Set([...Object.keys(capacity), ...holding.map((r) => r.gpu_model)])].sort();
  const cards = (r: SessionRow) => gpuOccupancy(r.gpu_count, r.gpu_slices_per_card ?? undefined, shareOfRow(r));

  // Lent: the borrowing beyond what nobody is guaranteed, spread over the organizations' lendable unused
  // guarantees (at most their lending limits), in proportion to them.
  const lentOf = new Map<string, number>();
  for (const model of models) {
    const guaranteedSum = tree.orgs.reduce((s, o) => s + (o.quotas?.[model]?.guaranteed ?? 0), 0);
    const borrowedSum = holding
      .filter((r) => r.gpu_model === model && r.capacity_class === "borrowed")
      .reduce((s, r) => s + cards(r), 0);
    const beyond = Math.max(0, borrowedSum - Math.max(0, (capacity[model] ?? 0) - guaranteedSum));
    const lendable = tree.orgs.map((o) => {
      const q = o.quotas?.[model];
      const used = holding
        .filter((r) => r.gpu_model === model && r.organization_id === o.org && r.capacity_class === "guaranteed")
        .reduce((s, r) => s + cards(r), 0);
      const unused = Math.max(0, (q?.guaranteed ?? 0) - used);
      return [o.org, Math.min(unused, q?.lendingLimit ?? unused)] as const;
    });
    const total = lendable.reduce((s, [, l]) => s + l, 0);
    for (const [org, l] of lendable) lentOf.set(`${org}/${model}`, total > 0 ? (beyond * l) / total : 0);
  }

  const standingOf = (
    rows: SessionRow[],
    quota: (model: string) => number,
    lent: (model: string) => number,
  ): ModelStanding[] =>
    models
      .map((gpuModel) => {
        const mine = rows.filter((r) => r.gpu_model === gpuModel);
        return {
          gpuModel,
          guaranteed: quota(gpuModel),
          used: mine.filter((r) => r.capacity_class !== "borrowed").reduce((s, r) => s + cards(r), 0),
          borrowed: mine.filter((r) => r.capacity_class === "borrowed").reduce((s, r) => s + cards(r), 0),
          lent: lent(gpuModel),
        };
      })
      .filter((m) => m.guaranteed > 0 || m.used > 0 || m.borrowed > 0);

  const organizations = visible.map((o): Standing => {
    const share = tree.orgs.find((x) => x.org === o.id);
    const fairShare = frac(weightOf(o.id), totalWeight || 1);
    const usageShare = frac(usage.orgs[o.id] ?? 0, totalUsage);
    const projects = projectRows.filter((p) => p.organization_id === o.id);
    const pWeight = (id: string) => share?.projects?.find((p) => p.project === id)?.weight ?? 1;
    const pTotalWeight = projects.reduce((s, p) => s + pWeight(p.id), 0);
    const pTotalUsage = projects.reduce((s, p) => s + (usage.projects[`${o.id}/${p.id}`] ?? 0), 0);
    return {
      id: o.id,
      name: o.name,
      weight: weightOf(o.id),
      fairShare,
      usageShare,
      weightedShare: frac(usageShare, fairShare),
      decayedUsage: usage.orgs[o.id] ?? 0,
      models: standingOf(
        holding.filter((r) => r.organization_id === o.id),
        (m) => share?.quotas?.[m]?.guaranteed ?? 0,
        (m) => lentOf.get(`${o.id}/${m}`) ?? 0,
      ),
      projects: projects.map((p) => {
        const ps = share?.projects?.find((x) => x.project === p.id);
        const pf = frac(pWeight(p.id), pTotalWeight);
        const pu = frac(usage.projects[`${o.id}/${p.id}`] ?? 0, pTotalUsage);
        // Its users: those with decayed usage or a session holding a GPU here, each of weight 1.
        const prefix = `${o.id}/${p.id}/`;
        const userUsage = (u: string) => usage.users[prefix + u] ?? 0;
        const userIds = [
          ...new Set([
            ...Object.keys(usage.users)
              .filter((k) => k.startsWith(prefix))
              .map((k) => k.slice(prefix.length)),
            ...holding.filter((r) => r.project_id === p.id).map((r) => r.owner_id),
          ]),
        ].sort();
        const uTotalUsage = userIds.reduce((s, u) => s + userUsage(u), 0);
        return {
          id: p.id,
          name: p.name,
          weight: pWeight(p.id),
          fairShare: pf,
          usageShare: pu,
          weightedShare: frac(pu, pf),
          decayedUsage: usage.projects[`${o.id}/${p.id}`] ?? 0,
          models: standingOf(
            holding.filter((r) => r.project_id === p.id),
            (m) => ps?.quotas?.[m]?.guaranteed ?? 0,
            () => 0,
          ),
          users: userIds.map((u) => {
            const uf = frac(1, userIds.length);
            const uu = frac(userUsage(u), uTotalUsage);
            return {
              id: u,
              name: userName.get(u) ?? u,
              weight: 1,
              fairShare: uf,
              usageShare: uu,
              weightedShare: frac(uu, uf),
              decayedUsage: userUsage(u),
              models: standingOf(
                holding.filter((r) => r.project_id === p.id && r.owner_id === u),
                () => 0,
                () => 0,
              ),
            };
          }),
        };
      }),
    };
  });
  return { asOf: now, capacity, organizations };
}

export interface ReclaimRow {
  id: string;
  session_id: string;
  organization_id: string;
  project_id: string | null;
  owner_id: string;
  for_session_id: string;
  for_organization_id: string;
  gpu_model: string;
  gpus: number;
  reason: string;
  noticed_at: Date;
  pause_at: Date;
  paused_at: Date | null;
  resumed_at: Date | null;
  withdrawn_at: Date | null;
}

/** The reclaim log, newest first, as far as the caller may see it. */
export function reclaimLog(deps: Deps, principal: Principal, organizationId?: string): Knex.QueryBuilder {
  const scope = scopeOf(principal);
  const q = deps.db("capacity_reclaims").orderBy([
    { column: "noticed_at", order: "desc" },
    { column: "id", order: "desc" },
  ]);
  if (organizationId)
    q.where((w) => w.where({ organization_id: organizationId }).orWhere({ for_organization_id: organizationId }));
  if (!scope.all) {
    const admin = [...scope.adminOrganizations];
    q.where((w) =>
      w
        .whereIn("organization_id", admin)
        .orWhereIn("for_organization_id", admin)
        .orWhere({ owner_id: principal.userId }),
    );
  }
  return q;
}
