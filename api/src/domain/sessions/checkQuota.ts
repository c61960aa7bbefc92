// The quota gate of creating and resuming a session. Creates pass it in batches (admission.ts, with the
// pure halves below); resume through `checkQuota`. One function, called inside the transaction that
// holds the owner's lock, before anything is written: the owner's own limits under that lock, then the
// organization's door lock for what colleagues share (so two concurrent requests, by one person or
// several, cannot both pass "one more"). It throws QuotaExceeded
// (403 `quota_exceeded`) with details: which limit, its value, what is in use, what the request adds,
// and the scope the limit comes from. The cost preview asks the same checks (`quotaRefusal`) unlocked.
//
// Now: the ResourcePolicy limits (GPUs and concurrent sessions per user, GPUs per project and
// organization, allowed offerings). The narrowest scope that sets a limit wins: the owner's user-scoped
// policy in the organization (an approved quota request), then project, organization, global.
// Then billing's door (api/src/domain/credits/door.ts): the wallets must cover a minimum run at the offering's
// rate after the minimum runs owed to the organization's sessions already let in, within the wallets'
// spend limits, and the organization's budget must not be spent.
import type { CapacityClass, Offering, ResourcePolicy } from "@berth/crds";
import type { Knex } from "knex";
import { countLiveForOwner, OCCUPANCY_SQL, type OwnerTally } from "../../db/operations/sessions/countLiveForOwner.ts";
import { lockOrganizationDoor } from "../../db/operations/sessions/lockOrganization.ts";
import { ENDED_PHASES } from "../../db/operations/sessions/types.ts";
import type { Deps } from "../../deps.ts";
import { QuotaExceeded } from "../../errors.ts";
import { type LimitSite, policiesAt } from "../catalog/policyChain.ts";
import { assessStart, type DoorRequest } from "../credits/door.ts";
import type { Principal } from "../identity/principal.ts";
import { type ClassScope, capacityRefusal, liveGpusOfClass, ratePermilleOf } from "./capacityClass.ts";
import { sessionsRuntimeOf } from "./runtime.ts";

export interface QuotaRequest {
  /** "create" counts one more session; "resume" brings a paused one back (it is not counted while paused). */
  kind: "create" | "resume";
  ownerId: string;
  organizationId: string;
  projectId: string | null;
  offering: Offering;
  /** Whole GPUs (billing's rate scales with them); a slice is 1. */
  gpuCount: number;
  /** What quotas count (docs/dev/gpu-sharing.md): a 1/4 slice is 0.25; absent: gpuCount. */
  gpuOccupancy?: number;
  /** On resume: the session itself, not counted among those already owed a minimum run. */
  sessionId?: string;
  /** docs/dev/fair-share.md; absent: guaranteed. */
  capacityClass?: CapacityClass;
}

type LimitName = keyof ResourcePolicy["spec"]["limits"];

/** What the gate reads besides Postgres: the catalog (policies) and billing's door. */
export type QuotaDeps = Pick<Deps, "sessions" | "credits">;

/** GPU occupancy a request adds: quotas count slices by their share (sums of 1/2, 1/4, 1/8 are exact in binary). */
export function occupancyOf(req: Pick<QuotaRequest, "gpuCount" | "gpuOccupancy">): number {
  return req.gpuOccupancy ?? req.gpuCount;
}

/**
 * Over a limit, up to floating point's last bits: MIG shares are sevenths, and seven 1/7 add up to
 * 0.9999999999999998, which must fill a limit of 1 exactly as eight 1/8 do.
 */
export function exceeds(total: number, limit: number): boolean {
  return total > limit + 1e-9;
}

/** The effective value of one limit and where it comes from (`policy`: the object's name). */
export function effectiveLimit(
  policies: readonly ResourcePolicy[],
  name: LimitName,
  at: LimitSite,
): { value: number; scope: string; policy: string } | undefined {
  for (const [p, scope] of policiesAt(policies, at)) {
    const v = p.spec.limits[name];
    if (v !== undefined) return { value: v, scope, policy: p.metadata.name as string };
  }
  return undefined;
}

/**
 * The gate: refuses on the owner's own limits first (the caller holds the owner's lock, so those cannot
 * move), then takes the organization's door lock (so people sharing a project's or organization's GPU
 * limits, wallets and budget cannot both pass on what only one fits) and refuses on those. Only what
 * needs the door lock runs under it: every organization's creates queue on that lock, one at a time.
 */
export async function checkQuota(deps: QuotaDeps, tx: Knex.Transaction, req: QuotaRequest): Promise<void> {
  const policies = await sessionsRuntimeOf(deps).catalog.policies();
  const own = await ownerRefusal(tx, policies, req);
  if (own) throw own;
  await lockOrganizationDoor(tx, req.organizationId);
  const shared = await sharedRefusal(deps, tx, policies, req);
  if (shared) throw shared;
}

/**
 * What the gate would refuse, or undefined: reads only, takes no lock (the cost preview asks it with
 * the plain pool; the gate inside its locked transaction). Refusals come in the gate's order.
 */
export async function quotaRefusal(
  deps: QuotaDeps,
  db: Knex,
  _principal: Principal,
  req: QuotaRequest,
): Promise<QuotaExceeded | undefined> {
  const policies = await sessionsRuntimeOf(deps).catalog.policies();
  return (await ownerRefusal(db, policies, req)) ?? (await sharedRefusal(deps, db, policies, req));
}

/** The limits of the offering and of the owner alone (allowed offerings, sessions and GPUs per user). */
async function ownerRefusal(
  db: Knex,
  policies: readonly ResourcePolicy[],
  req: QuotaRequest,
): Promise<QuotaExceeded | undefined> {
  return ownerRefusalGiven(policies, req, () => countLiveForOwner(db, req.ownerId));
}

/**
 * `ownerRefusal` with the owner's tally given (read only when a limit needs it): a batch of creates
 * (admission.ts) reads every owner's tally once and counts each admitted create in before the next.
 */
export async function ownerRefusalGiven(
  policies: readonly ResourcePolicy[],
  req: QuotaRequest,
  tally: () => OwnerTally | Promise<OwnerTally>,
): Promise<QuotaExceeded | undefined> {
  const at = { organizationId: req.organizationId, projectId: req.projectId, userId: req.ownerId };

  // Allowed offerings: the narrowest policy that lists them decides.
  const lists = policiesAt(policies, at)
    .map(([p]) => p)
    .find((p) => p.spec.allowedOfferings !== undefined);
  const offeringName = req.offering.metadata.name as string;
  if (lists?.spec.allowedOfferings && !lists.spec.allowedOfferings.includes(offeringName)) {
    return new QuotaExceeded(`the offering ${offeringName} is not allowed here`, {
      limit: "allowedOfferings",
      value: lists.spec.allowedOfferings,
      requested: offeringName,
      scope: `${lists.spec.scope.kind}${lists.spec.scope.id ? ` ${lists.spec.scope.id}` : ""}`,
    });
  }

  const sessionsLimit = effectiveLimit(policies, "maxConcurrentSessionsPerUser", at);
  const gpuLimit = effectiveLimit(policies, "maxGpusPerUser", at);
  if (!sessionsLimit && !gpuLimit) return undefined;
  const mine = await tally();
  if (sessionsLimit && mine.sessions + 1 > sessionsLimit.value) {
    return new QuotaExceeded(`at most ${sessionsLimit.value} running or waiting sessions per user`, {
      limit: "maxConcurrentSessionsPerUser",
      value: sessionsLimit.value,
      current: mine.sessions,
      requested: 1,
      scope: sessionsLimit.scope,
    });
  }
  if (gpuLimit && exceeds(mine.gpus + occupancyOf(req), gpuLimit.value)) {
    return new QuotaExceeded(`at most ${gpuLimit.value} GPUs per user`, {
      limit: "maxGpusPerUser",
      value: gpuLimit.value,
      current: mine.gpus,
      requested: occupancyOf(req),
      scope: gpuLimit.scope,
    });
  }
  return undefined;
}

/** What the owner shares with others: the project's and organization's GPUs, and billing's door. */
async function sharedRefusal(
  deps: QuotaDeps,
  db: Knex,
  policies: readonly ResourcePolicy[],
  req: QuotaRequest,
): Promise<QuotaExceeded | undefined> {
  const gpus =
    (await sharedGpuRefusal(policies, req, (scope) => liveGpusOf(db, scope))) ??
    (await classRefusal(policies, req, (scope, cls) => liveGpusOfClass(db, scope, req.offering.spec.gpuModel, cls)));
  return gpus ?? (await assessStart(deps.credits, db, doorRequest(req))).refusal;
}

/** A project's or an organization's GPUs held or waited for by its live sessions. */
export type GpuScope = { column: "project_id" | "organization_id"; id: string };

export async function liveGpusOf(db: Knex, scope: GpuScope): Promise<number> {
  const row = (await db("sessions")
    .where({ [scope.column]: scope.id, desired_state: "Running" })
    .whereNotIn("phase", ENDED_PHASES)
    .first(db.raw(`coalesce(sum(${OCCUPANCY_SQL}), 0)::float8 as gpus`))) as { gpus: number } | undefined;
  return row?.gpus ?? 0;
}

/** The project's and organization's GPU limits, with what they hold given (read only when a limit is set). */
export async function sharedGpuRefusal(
  policies: readonly ResourcePolicy[],
  req: QuotaRequest,
  held: (scope: GpuScope) => number | Promise<number>,
): Promise<QuotaExceeded | undefined> {
  const at = { organizationId: req.organizationId, projectId: req.projectId, userId: req.ownerId };
  for (const [name, column, id] of [
    ["maxGpusPerProject", "project_id", req.projectId],
    ["maxGpusPerOrganization", "organization_id", req.organizationId],
  ] as const) {
    if (!id) continue;
    const limit = effectiveLimit(policies, name, at);
    if (!limit) continue;
    const current = await held({ column, id });
    if (exceeds(current + occupancyOf(req), limit.value)) {
      return new QuotaExceeded(
        `at most ${limit.value} GPUs per ${column === "project_id" ? "project" : "organization"}`,
        { limit: name, value: limit.value, current, requested: occupancyOf(req), scope: limit.scope },
      );
    }
  }
  return undefined;
}

/** The guarantee and borrowing limits of the request's class (capacityClass.ts). */
export function classRefusal(
  policies: readonly ResourcePolicy[],
  req: QuotaRequest,
  held: (scope: ClassScope, cls: CapacityClass) => number | Promise<number>,
): Promise<QuotaExceeded | undefined> {
  return capacityRefusal(
    policies,
    { organizationId: req.organizationId, projectId: req.projectId, gpuModel: req.offering.spec.gpuModel },
    req.capacityClass ?? "guaranteed",
    occupancyOf(req),
    held,
  );
}

/** What billing's door (api/src/domain/credits/door.ts) needs to know of the request. */
export function doorRequest(req: QuotaRequest): DoorRequest {
  return {
    ownerId: req.ownerId,
    organizationId: req.organizationId,
    projectId: req.projectId,
    offering: { hourlyCreditRate: req.offering.spec.hourlyCreditRate, gpuCount: req.offering.spec.gpuCount },
    gpuCount: req.gpuCount,
    ...(req.capacityClass === "borrowed" ? { ratePermille: ratePermilleOf("borrowed", req.offering) } : {}),
    ...(req.sessionId ? { sessionId: req.sessionId } : {}),
  };
}
