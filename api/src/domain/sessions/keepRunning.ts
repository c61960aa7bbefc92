// "Keep running": the owner of a running session tells the idle rule they still need it. It counts as
// activity now, so the idle deadline moves to a full idle timeout from now (docs/dev/idle-and-limits.md),
// at most `keepRunningMax` times per run period (the resource policy's; a resume starts a new period). Only
// the owner may: an administrator who sees the session gets 403 `forbidden` (`not_owner`), others 404.
// Written as an annotation on the Session (the API's intent; the worker's reclaim loop reads it).
import { KEEP_RUNNING_ANNOTATION } from "@berth/crds";
import type { SessionView } from "../../db/operations/sessions/view.ts";
import type { Deps } from "../../deps.ts";
import { DomainError, Forbidden } from "../../errors.ts";
import { reclaimPolicyOf } from "../catalog/reclaimPolicy.ts";
import type { Principal } from "../identity/principal.ts";
import { act } from "./act.ts";
import { visibleRow } from "./lookup.ts";
import { sessionsRuntimeOf } from "./runtime.ts";

export async function keepSessionRunning(deps: Deps, principal: Principal, id: string): Promise<SessionView> {
  const row = await visibleRow(deps, principal, id);
  if (row.owner_id !== principal.userId)
    throw new Forbidden("only the session's owner can keep it running", { reason: "not_owner" });
  const policy = reclaimPolicyOf(await sessionsRuntimeOf(deps).catalog.policies(), {
    organizationId: row.organization_id,
    projectId: row.project_id,
    userId: row.owner_id,
  });
  const now = deps.clock.now();
  let next = "";
  return act(
    deps,
    principal,
    id,
    {
      emitEvent: true,
      check: (cr) => {
        const phase = cr.status?.phase ?? "Pending";
        if (phase !== "Running" || cr.spec.desiredState !== "Running" || !cr.status?.startedAt)
          throw new DomainError("invalid_session_state", `cannot keep a ${phase} session running: it is not running`, {
            action: "keep-running",
            phase,
            desired_state: cr.spec.desiredState,
          });
        let used = 0;
        try {
          const k = JSON.parse(cr.metadata.annotations?.[KEEP_RUNNING_ANNOTATION] ?? "{}") as {
            period?: string;
            count?: number;
          };
          if (k.period === cr.status.startedAt && typeof k.count === "number") used = k.count;
        } catch {
          used = 0;
        }
        if (used >= policy.keepRunningMax)
          throw new DomainError(
            "keep_running_limit_reached",
            `this session was kept running ${used} time${used === 1 ? "" : "s"} since it started, the most your resource policy allows; it will pause when idle, and you can resume it then`,
            { used, max: policy.keepRunningMax },
          );
        next = JSON.stringify({ period: cr.status.startedAt, count: used + 1, at: now.toISOString() });
      },
    },
    () => ({ annotations: { [KEEP_RUNNING_ANNOTATION]: next } }),
  );
}
