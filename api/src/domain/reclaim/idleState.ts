// Where a session's idle rule stands now, for its owner and those who see it: the plan the worker's
// reclaim loop runs (watch.ts planFor), computed at the read from the same rows, so the console can say
// which signal is missing while the rule is suspended (nothing of it is stored: a busy fleet costs no
// write, and a suspended rule neither).
import { activityOf, sourcesSeen } from "../../db/operations/reclaim/readActivity.ts";
import type { Deps } from "../../deps.ts";
import { reclaimPolicyOf, sessionRules } from "../catalog/reclaimPolicy.ts";
import type { Principal } from "../identity/principal.ts";
import { readResource, visibleRow } from "../sessions/lookup.ts";
import { sessionsRuntimeOf } from "../sessions/runtime.ts";
import type { Signals } from "./plan.ts";
import { planFor } from "./watch.ts";

export type SignalName = keyof Signals;

export interface IdleState {
  /** not_running: the rule applies only while the session runs. */
  state: "counting" | "warned" | "suspended" | "off" | "not_running";
  idleTimeoutMinutes: number;
  maxRuntimeMinutes: number;
  since: Date | null;
  deadline: Date | null;
  runtimeDeadline: Date | null;
  signals: Record<SignalName, { state: "known" | "unknown" | "none"; lastActiveAt: Date | null; why: string | null }>;
  /** The signals that keep the rule suspended, in the order gpu, traffic, notebook. */
  missing: SignalName[];
  keepRunning: { used: number; max: number };
}

const NAMES: SignalName[] = ["gpu", "traffic", "notebook"];

export async function idleStateOf(deps: Deps, principal: Principal, id: string): Promise<IdleState> {
  const row = await visibleRow(deps, principal, id);
  const s = await readResource(deps, row);
  const now = deps.clock.now();
  const [policies, activity, sources] = await Promise.all([
    sessionsRuntimeOf(deps).catalog.policies(),
    activityOf(deps.db, [id]),
    sourcesSeen(deps.db),
  ]);
  const running = !!s && s.status?.phase === "Running" && s.spec.desiredState === "Running";
  if (!s || !running) {
    const policy = reclaimPolicyOf(policies, {
      organizationId: row.organization_id,
      projectId: row.project_id,
      userId: row.owner_id,
    });
    const none = { state: "none" as const, lastActiveAt: null, why: null };
    return {
      state: "not_running",
      ...sessionRules(policy, s?.spec ?? {}),
      since: null,
      deadline: null,
      runtimeDeadline: null,
      signals: { gpu: none, traffic: none, notebook: none },
      missing: [],
      keepRunning: { used: 0, max: policy.keepRunningMax },
    };
  }
  const plan = planFor(s, row, { now, policies, activity, sources });
  const signals = Object.fromEntries(
    NAMES.map((n) => {
      const v = plan.signals[n];
      return [
        n,
        v.state === "known"
          ? { state: "known", lastActiveAt: v.lastActiveAt, why: null }
          : v.state === "unknown"
            ? { state: "unknown", lastActiveAt: null, why: v.why }
            : { state: "none", lastActiveAt: null, why: null },
      ];
    }),
  ) as IdleState["signals"];
  return {
    state: plan.idle.state,
    idleTimeoutMinutes: plan.rules.idleTimeoutMinutes,
    maxRuntimeMinutes: plan.rules.maxRuntimeMinutes,
    since: plan.idle.since ?? null,
    deadline: plan.idle.deadline ?? null,
    runtimeDeadline: plan.runtimeDeadline,
    signals,
    missing: plan.idle.state === "suspended" ? NAMES.filter((n) => plan.signals[n].state === "unknown") : [],
    keepRunning: plan.keepRunning,
  };
}
