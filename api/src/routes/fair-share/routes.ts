// Fair share's standing and reclaim log (docs/dev/fair-share.md). Lists answer the caller's scope: a
// super_admin every organization, an organization admin theirs, others none (their own sessions' reclaims
// in the log).
import { Paged, paginate } from "../../db/paging.ts";
import { fairShareStanding, type ReclaimRow, reclaimLog, type Standing } from "../../domain/fairshare/standing.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { CapacityReclaim, FairShareQuery, FairShareView, ListReclaimsQuery } from "./schemas.ts";

const TAGS = ["fair share"];
const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

function presentStanding(s: Standing) {
  return {
    id: s.id,
    name: s.name,
    weight: s.weight,
    fair_share: s.fairShare,
    usage_share: s.usageShare,
    weighted_share: s.weightedShare,
    decayed_usage_gpu_hours: s.decayedUsage,
    models: s.models.map((m) => ({
      gpu_model: m.gpuModel,
      guaranteed: m.guaranteed,
      used: m.used,
      borrowed: m.borrowed,
      lent: m.lent,
    })),
  };
}

export const fairShareRoute = defineRoute({
  method: "get",
  path: "/api/v1/fair-share",
  operationId: "getFairShare",
  tags: TAGS,
  summary:
    "Per organization, project and user: guaranteed, used, borrowed, lent, decayed usage, fair share and weighted share",
  description:
    "Per GPU model the guarantee, what guaranteed sessions use, what borrowed sessions hold beyond it and what of the unused guarantee others borrow; the weight's fair share and the decayed usage against it; within each project its users (weight 1 each). Scope: a super_admin every organization, an organization admin theirs, others an empty list.",
  auth: "user",
  query: FairShareQuery,
  responses: { 200: FairShareView },
  handler: async ({ deps, principal, query }) => {
    const v = await fairShareStanding(deps, principal, query.organization_id);
    return {
      status: 200,
      body: {
        as_of: v.asOf.toISOString(),
        capacity: v.capacity,
        organizations: v.organizations.map((o) => ({
          ...presentStanding(o),
          projects: (o.projects ?? []).map((p) => ({
            ...presentStanding(p),
            users: (p.users ?? []).map(presentStanding),
          })),
        })),
      },
    };
  },
});

export const reclaimsRoute = defineRoute({
  method: "get",
  path: "/api/v1/fair-share/reclaims",
  operationId: "listCapacityReclaims",
  tags: TAGS,
  summary: "The reclaim log: which guaranteed session took which borrowed session's GPUs, why and when",
  description:
    "Newest first. Scope: a super_admin all; an organization admin the reclaims of and for their organizations; anyone the reclaims of their own sessions.",
  auth: "user",
  query: ListReclaimsQuery,
  responses: { 200: Paged(CapacityReclaim) },
  handler: async ({ deps, principal, query }) => ({
    status: 200,
    body: await paginate<ReclaimRow, ReturnType<typeof presentReclaim>>(
      deps.db,
      reclaimLog(deps, principal, query.organization_id),
      query,
      presentReclaim,
    ),
  }),
});

function presentReclaim(r: ReclaimRow) {
  return {
    id: r.id,
    session_id: r.session_id,
    organization_id: r.organization_id,
    project_id: r.project_id,
    owner_id: r.owner_id,
    for_session_id: r.for_session_id,
    for_organization_id: r.for_organization_id,
    gpu_model: r.gpu_model,
    gpus: r.gpus,
    reason: r.reason,
    noticed_at: iso(r.noticed_at) as string,
    pause_at: iso(r.pause_at) as string,
    paused_at: iso(r.paused_at),
    resumed_at: iso(r.resumed_at),
    withdrawn_at: iso(r.withdrawn_at),
  };
}

export const routes: RouteDef[] = [fairShareRoute, reclaimsRoute];
