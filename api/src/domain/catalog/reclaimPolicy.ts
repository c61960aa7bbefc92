// The idle and running-time rules that apply to a session: each field from the narrowest ResourcePolicy
// scope that sets it (the owner's own in the organization, as an approved quota request writes it; project,
// organization, global), then the built-in defaults. A session may ask for its own idle timeout within
// [min, max] and a shorter maximum running time (checked at creation).
import type { ResourcePolicy } from "@berth/crds";
import { DomainError } from "../../errors.ts";
import { type LimitSite, policiesAt } from "./policyChain.ts";

export const RECLAIM_DEFAULTS = {
  idleTimeoutMinutes: 60,
  minTimeoutMinutes: 20,
  maxTimeoutMinutes: 480,
  gpuUtilizationPercent: 5,
  keepRunningMax: 3,
  maxSessionHours: 24,
} as const;

export interface ReclaimPolicy {
  /** 0: idle pausing off. */
  idleTimeoutMinutes: number;
  minTimeoutMinutes: number;
  maxTimeoutMinutes: number;
  gpuUtilizationPercent: number;
  keepRunningMax: number;
  maxRuntimeMinutes: number;
}

/** Where the rules are read: the session's owner (their own policy comes first), project and organization. */
type Scope = LimitSite;

function chain(policies: readonly ResourcePolicy[], at: Scope): ResourcePolicy[] {
  return policiesAt(policies, at).map(([p]) => p);
}

/** The policy's rules for a scope (before what the session asked for). */
export function reclaimPolicyOf(policies: readonly ResourcePolicy[], at: Scope): ReclaimPolicy {
  const c = chain(policies, at);
  const idle = <K extends keyof NonNullable<ResourcePolicy["spec"]["idle"]>>(k: K) =>
    c.map((p) => p.spec.idle?.[k]).find((v) => v !== undefined);
  const hours = c.map((p) => p.spec.limits.maxSessionHours).find((v) => v !== undefined);
  return {
    idleTimeoutMinutes: idle("timeoutMinutes") ?? RECLAIM_DEFAULTS.idleTimeoutMinutes,
    minTimeoutMinutes: idle("minTimeoutMinutes") ?? RECLAIM_DEFAULTS.minTimeoutMinutes,
    maxTimeoutMinutes: idle("maxTimeoutMinutes") ?? RECLAIM_DEFAULTS.maxTimeoutMinutes,
    gpuUtilizationPercent: idle("gpuUtilizationPercent") ?? RECLAIM_DEFAULTS.gpuUtilizationPercent,
    keepRunningMax: idle("keepRunningMax") ?? RECLAIM_DEFAULTS.keepRunningMax,
    // 0 hours in a policy would pause every session at once: read as "no limit set here".
    maxRuntimeMinutes: (hours && hours > 0 ? hours : RECLAIM_DEFAULTS.maxSessionHours) * 60,
  };
}

/** What one session runs under: its own asks where it made them (they were checked at creation). */
export function sessionRules(
  p: ReclaimPolicy,
  asked: { idleTimeoutMinutes?: number | undefined; maxRuntimeMinutes?: number | undefined },
): { idleTimeoutMinutes: number; maxRuntimeMinutes: number } {
  return {
    // A policy that turns idle pausing off wins over a session's ask; the ask is clamped to the bounds in force
    // now (an administrator may have narrowed them since the session was created).
    idleTimeoutMinutes:
      p.idleTimeoutMinutes === 0
        ? 0
        : asked.idleTimeoutMinutes === undefined
          ? p.idleTimeoutMinutes
          : Math.min(p.maxTimeoutMinutes, Math.max(p.minTimeoutMinutes, asked.idleTimeoutMinutes)),
    maxRuntimeMinutes: Math.min(p.maxRuntimeMinutes, asked.maxRuntimeMinutes ?? p.maxRuntimeMinutes),
  };
}

export class ReclaimAskRefused extends DomainError {}

/** Refuses a creation's asks outside the policy: 400 `idle_timeout_out_of_bounds` / `max_runtime_out_of_bounds`. */
export function checkReclaimAsks(
  p: ReclaimPolicy,
  asked: { idleTimeoutMinutes?: number | undefined; maxRuntimeMinutes?: number | undefined },
): void {
  const t = asked.idleTimeoutMinutes;
  if (t !== undefined && (t < p.minTimeoutMinutes || t > p.maxTimeoutMinutes))
    throw new ReclaimAskRefused(
      "idle_timeout_out_of_bounds",
      `idle_timeout_minutes must be between ${p.minTimeoutMinutes} and ${p.maxTimeoutMinutes} under your resource policy`,
      { field: "idle_timeout_minutes", value: t, min: p.minTimeoutMinutes, max: p.maxTimeoutMinutes },
    );
  const r = asked.maxRuntimeMinutes;
  if (r !== undefined && (r < 1 || r > p.maxRuntimeMinutes))
    throw new ReclaimAskRefused(
      "max_runtime_out_of_bounds",
      `max_runtime_minutes must be between 1 and ${p.maxRuntimeMinutes} under your resource policy`,
      { field: "max_runtime_minutes", value: r, min: 1, max: p.maxRuntimeMinutes },
    );
}
