// /api/v1/queue: the sessions waiting for a GPU, in the order they will be placed; cancel; priority.
//
// Who may change priority: the session's owner (and its project's admins) may lower it, and raise it up
// to the ResourcePolicy's `maxPriority` (the default global policy says 0, so members cannot jump the
// queue); organization admins and super_admin may set any value from -1000 to 1000.

import type { Eta } from "@berth/controllers";
import { Paged } from "../../db/paging.ts";
import { queueEtas } from "../../domain/fairshare/queueEta.ts";
import { cancelQueued, changePriority, listQueue } from "../../domain/sessions/queue.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentSession } from "../sessions/presenter.ts";
import { Session, SessionParams } from "../sessions/schemas.ts";
import { ListQueueQuery, PriorityBody, QueueEntry } from "./schemas.ts";

const TAGS = ["queue"];

const minutes = (ms: number) => (Number.isFinite(ms) ? Math.round(ms / 6_000) / 10 : null);

function presentEta(e: Eta | undefined) {
  if (!e) return null;
  return {
    as_of: e.asOf,
    p50_minutes: minutes(e.p50Ms),
    p90_minutes: minutes(e.p90Ms),
    per_cluster: e.perCluster.map((c) => ({
      cluster_id: c.clusterId,
      share: c.share,
      p50_minutes: minutes(c.p50Ms),
      p90_minutes: minutes(c.p90Ms),
    })),
    method: e.method,
    reason: e.reason,
    message: e.message,
    hint: e.hint ? { label: e.hint.label, p50_minutes: minutes(e.hint.p50Ms), message: e.hint.message } : null,
  };
}

export const listQueueRoute = defineRoute({
  method: "get",
  path: "/api/v1/queue",
  operationId: "listQueue",
  tags: TAGS,
  summary: "Queued sessions with their position and reason",
  description:
    'Sessions in phase Queued, grouped by GPU model in placement order (priority, then age), with the live position. They start automatically when a GPU of their model frees up (a pause, a termination, a node added). `eta` estimates when: p50 and p90 in minutes overall and per eligible cluster, as of when, why it waits, ∞ (null) with "cannot start while …" when nothing can fit, and a hint when another shape would start sooner (docs/dev/fair-share.md).',
  auth: "user",
  query: ListQueueQuery,
  errors: ["not_found"],
  responses: { 200: Paged(QueueEntry) },
  handler: async ({ deps, principal, query }) => {
    const page = await listQueue(deps, principal, query.scope, query, {
      ...(query.gpu_model ? { gpuModel: query.gpu_model } : {}),
      ...(query.cluster_id ? { clusterId: query.cluster_id } : {}),
    });
    // The estimate is the whole queue's (a forward simulation); only the page's entries are shown.
    const etas =
      page.data.length > 0
        ? await queueEtas(deps.db, deps.sessions, deps.clock.now(), new Set(page.data.map((e) => e.session.id))).catch(
            (err: unknown) => {
              deps.log.warn({ err }, "queue ETA could not be estimated");
              return new Map<string, Eta>();
            },
          )
        : new Map<string, Eta>();
    return {
      status: 200,
      body: {
        data: page.data.map((e) => ({
          session: presentSession(e.session),
          position: e.position,
          reason: e.reason,
          waiting_since: new Date(e.waitingSince).toISOString(),
          eta: presentEta(etas.get(e.session.id)),
        })),
        pagination: page.pagination,
      },
    };
  },
});

export const cancelQueuedRoute = defineRoute({
  method: "post",
  path: "/api/v1/queue/:sessionId/cancel",
  operationId: "cancelQueuedSession",
  tags: TAGS,
  summary: "Take a session out of the queue (it is terminated without having run)",
  description:
    "Only for a session that waits (Pending or Queued); otherwise 409 `invalid_session_state`. Answers 202 with the session.",
  auth: "user",
  params: SessionParams,
  audit: "queue.cancel",
  errors: ["invalid_session_state"],
  responses: { 202: Session },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("session", params.sessionId);
    return { status: 202, body: presentSession(await cancelQueued(deps, principal, params.sessionId)) };
  },
});

export const changePriorityRoute = defineRoute({
  method: "patch",
  path: "/api/v1/queue/:sessionId",
  operationId: "changeQueuePriority",
  tags: TAGS,
  summary: "Change a session's priority",
  description:
    "Lowering is always allowed to whoever manages the session; raising above the policy's `maxPriority` (default 0) needs an organization admin (403 `forbidden` otherwise). Takes effect at the next placement pass.",
  auth: "user",
  params: SessionParams,
  body: PriorityBody,
  audit: "queue.priority",
  errors: ["invalid_session_state"],
  responses: { 200: Session },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("session", params.sessionId);
    audit.detail("priority", body.priority);
    return {
      status: 200,
      body: presentSession(await changePriority(deps, principal, params.sessionId, body.priority)),
    };
  },
});

export const routes: RouteDef[] = [listQueueRoute, cancelQueuedRoute, changePriorityRoute];
