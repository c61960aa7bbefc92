// A session's capacity class at the door (docs/dev/fair-share.md). The class is the person's choice at
// creation and fixed from then on, so they know before launch whether the session can be reclaimed:
//   guaranteed  within the organization's (and, when it sets one, the project's) guaranteed GPUs of the
//               model; never reclaimed. Where no policy of the fleet guarantees the model, fair share is
//               off for it and every session is guaranteed without a bound (as before fair share).
//   borrowed    idle capacity beyond the guarantee, within the borrowing limits, at the offering's borrowed
//               rate; paused after a warning when a guaranteed request needs its GPUs.
import type { CapacityClass, GpuGuarantee, ResourcePolicy } from "@berth/crds";
import type { Knex } from "knex";
import { OCCUPANCY_SQL } from "../../db/operations/sessions/countLiveForOwner.ts";
import { ENDED_PHASES } from "../../db/operations/sessions/types.ts";
import { QuotaExceeded } from "../../errors.ts";

export const FAIR_SHARE_DEFAULTS = {
  reclaimGraceSeconds: 600,
  minRuntimeSeconds: 600,
  usageHalfLifeHours: 168,
  weight: 1,
} as const;

export interface CapacitySite {
  organizationId: string;
  projectId: string | null;
  gpuModel: string;
}

/** The guarantee a scope's own policy sets for a model (guarantees are not inherited: each scope states its own). */
export function guaranteeOf(
  policies: readonly ResourcePolicy[],
  kind: "organization" | "project",
  id: string,
  gpuModel: string,
): GpuGuarantee | undefined {
  const p = policies.find((x) => x.spec.scope.kind === kind && x.spec.scope.id === id);
  return p?.spec.fairShare?.guarantees?.find((g) => g.gpuModel === gpuModel);
}

/** Whether any policy guarantees the model: fair share applies to it only then. */
export function fairShareOn(policies: readonly ResourcePolicy[], gpuModel: string): boolean {
  return policies.some((p) => p.spec.fairShare?.guarantees?.some((g) => g.gpuModel === gpuModel && g.gpus > 0));
}

/** One fair-share setting, from the narrowest scope that sets it, then the default. */
export function fairShareSetting<K extends "reclaimGraceSeconds" | "minRuntimeSeconds" | "usageHalfLifeHours">(
  policies: readonly ResourcePolicy[],
  at: { organizationId: string; projectId: string | null },
  key: K,
): number {
  const chain = [
    at.projectId
      ? policies.find((p) => p.spec.scope.kind === "project" && p.spec.scope.id === at.projectId)
      : undefined,
    policies.find((p) => p.spec.scope.kind === "organization" && p.spec.scope.id === at.organizationId),
    policies.find((p) => p.spec.scope.kind === "global"),
  ];
  for (const p of chain) {
    const v = p?.spec.fairShare?.[key];
    if (v !== undefined) return v;
  }
  return FAIR_SHARE_DEFAULTS[key];
}

export type ClassScope = { column: "project_id" | "organization_id"; id: string };

/** GPUs of a model that a scope's live sessions of a class hold or wait for. */
export async function liveGpusOfClass(
  db: Knex,
  scope: ClassScope,
  gpuModel: string,
  cls: CapacityClass,
): Promise<number> {
  const row = (await db("sessions")
    .where({ [scope.column]: scope.id, desired_state: "Running", gpu_model: gpuModel, capacity_class: cls })
    .whereNotIn("phase", ENDED_PHASES)
    .first(db.raw(`coalesce(sum(${OCCUPANCY_SQL}), 0)::float8 as gpus`))) as { gpus: number } | undefined;
  return row?.gpus ?? 0;
}

/**
 * Refuses a guaranteed request beyond its organization's or project's guarantee (with the hint to borrow)
 * and a borrowed one beyond a borrowing limit: 403 `quota_exceeded`, details name the limit and scope.
 */
export async function capacityRefusal(
  policies: readonly ResourcePolicy[],
  site: CapacitySite,
  cls: CapacityClass,
  occupancy: number,
  held: (scope: ClassScope, cls: CapacityClass) => number | Promise<number>,
): Promise<QuotaExceeded | undefined> {
  if (!fairShareOn(policies, site.gpuModel)) return undefined;
  // Narrowest first: the project's own bound is the one to name when both are reached.
  const scopes: [ClassScope, "organization" | "project"][] = [
    ...(site.projectId ? [[{ column: "project_id", id: site.projectId }, "project"] as [ClassScope, "project"]] : []),
    [{ column: "organization_id", id: site.organizationId }, "organization"],
  ];
  for (const [scope, kind] of scopes) {
    const g = guaranteeOf(policies, kind, scope.id, site.gpuModel);
    if (cls === "guaranteed") {
      // An organization without a guarantee of the model has none; a project without one is bound by its organization's.
      if (kind === "project" && !g) continue;
      const guaranteed = g?.gpus ?? 0;
      const current = await held(scope, "guaranteed");
      if (current + occupancy > guaranteed)
        return new QuotaExceeded(
          `the ${kind}'s guarantee of ${site.gpuModel} is ${guaranteed} GPUs and ${current} are in guaranteed use; ask for capacity_class "borrowed" to use idle capacity beyond it (it may be reclaimed after a warning)`,
          {
            limit: "guaranteed_gpus",
            gpu_model: site.gpuModel,
            value: guaranteed,
            current,
            requested: occupancy,
            scope: `${kind} ${scope.id}`,
            hint: "capacity_class: borrowed",
          },
        );
    } else if (g?.borrowingLimit !== undefined) {
      const current = await held(scope, "borrowed");
      if (current + occupancy > g.borrowingLimit)
        return new QuotaExceeded(
          `the ${kind} may borrow at most ${g.borrowingLimit} GPUs of ${site.gpuModel} beyond its guarantee and borrows ${current}`,
          {
            limit: "borrowing_limit_gpus",
            gpu_model: site.gpuModel,
            value: g.borrowingLimit,
            current,
            requested: occupancy,
            scope: `${kind} ${scope.id}`,
          },
        );
    }
  }
  return undefined;
}

/** The share of the rate a session of this class pays, in thousandths. */
export function ratePermilleOf(cls: CapacityClass, offering: { spec: { borrowedRatePermille?: number | undefined } }) {
  return cls === "borrowed" ? (offering.spec.borrowedRatePermille ?? 1000) : 1000;
}
