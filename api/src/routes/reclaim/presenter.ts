import type { IdleState } from "../../domain/reclaim/idleState.ts";
import type { SessionIdle } from "./schemas.ts";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function presentIdle(s: IdleState): SessionIdle {
  const sig = (v: IdleState["signals"]["gpu"]) => ({ state: v.state, last_active_at: iso(v.lastActiveAt), why: v.why });
  return {
    state: s.state,
    idle_timeout_minutes: s.idleTimeoutMinutes,
    max_runtime_minutes: s.maxRuntimeMinutes,
    since: iso(s.since),
    deadline: iso(s.deadline),
    runtime_deadline: iso(s.runtimeDeadline),
    signals: { gpu: sig(s.signals.gpu), traffic: sig(s.signals.traffic), notebook: sig(s.signals.notebook) },
    missing: s.missing,
    keep_running: s.keepRunning,
  };
}
