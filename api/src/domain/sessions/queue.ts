// The queue: sessions waiting for a GPU (phase Queued), in the order placement takes them (priority,
// then age), with their position among the sessions waiting for the same GPU model.
//
// Priority policy: the owner (and the project's admins) may lower a session's priority at will and raise
// it up to the ResourcePolicy's `maxPriority` (global default 0: members cannot jump the queue);
// organization admins and super_admin may set any value from -1000 to 1000. Cancel removes a queued
// (or not yet placed) session: it is terminated without ever holding a GPU.
import type { Knex } from "knex";
import { queueQuery } from "../../db/operations/sessions/listQueue.ts";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import { type SessionView, viewFromRow } from "../../db/operations/sessions/view.ts";
import { type Page, type PagedBody, paginate } from "../../db/paging.ts";
import type { Deps } from "../../deps.ts";
import { DomainError, Forbidden } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { act } from "./act.ts";
import { effectiveLimit } from "./checkQuota.ts";
import { sessionsRuntimeOf } from "./runtime.ts";
import { isSessionAdmin, visibilityOf } from "./visibility.ts";

export const PRIORITY_MIN = -1000;
export const PRIORITY_MAX = 1000;

export interface QueueEntry {
  session: SessionView;
  position: number;
  reason: string;
  waitingSince: Date;
}

export async function listQueue(
  deps: Deps,
  principal: Principal,
  scope: "mine" | "all",
  page: Page,
  f: { gpuModel?: string; clusterId?: string },
): Promise<PagedBody<QueueEntry>> {
  const q = queueQuery(deps.db as Knex, visibilityOf(principal, scope), f);
  return paginate<SessionRow & { live_position: number }, QueueEntry>(deps.db, q, page, (r) => ({
    session: viewFromRow(r),
    position: r.live_position,
    reason: r.message ?? "waiting for a free GPU",
    waitingSince: r.queued_at ?? r.created_at,
  }));
}

export function changePriority(deps: Deps, principal: Principal, id: string, priority: number): Promise<SessionView> {
  return act(
    deps,
    principal,
    id,
    {
      emitEvent: true,
      check: async (cr, row) => {
        const phase = cr.status?.phase ?? "Pending";
        if (phase === "Terminated" || phase === "Terminating" || cr.spec.desiredState === "Terminated") {
          throw new DomainError("invalid_session_state", "a terminated session has no priority to change", {
            phase,
            desired_state: cr.spec.desiredState,
          });
        }
        if (isSessionAdmin(principal, row) || priority <= cr.spec.priority) return;
        const max = effectiveLimit(await sessionsRuntimeOf(deps).catalog.policies(), "maxPriority", {
          organizationId: row.organization_id,
          projectId: row.project_id,
        });
        if (!max || priority > max.value) {
          throw new Forbidden(`only organization admins may raise a priority above ${max?.value ?? 0}`, {
            max_priority: max?.value ?? 0,
            requested: priority,
            current: cr.spec.priority,
          });
        }
      },
    },
    () => ({ spec: { priority } }),
  );
}

export function cancelQueued(deps: Deps, principal: Principal, id: string): Promise<SessionView> {
  return act(
    deps,
    principal,
    id,
    {
      check: (cr) => {
        const phase = cr.status?.phase ?? "Pending";
        if ((phase !== "Queued" && phase !== "Pending") || cr.spec.desiredState !== "Running") {
          throw new DomainError(
            "invalid_session_state",
            `only a queued session can be cancelled; this one is ${phase}`,
            { action: "cancel", phase, desired_state: cr.spec.desiredState },
          );
        }
      },
    },
    () => ({ spec: { desiredState: "Terminated" } }),
  );
}
