// /api/v1/sessions: create, list, detail, actions, bulk termination, GPU availability, cost preview and
// (for administrators) the underlying resource and its Kubernetes events. Connect links live in
// routes/connect, the event stream in ./stream.ts.
//
// Actions are POST /api/v1/sessions/{id}/{pause|resume|restart|terminate}: each answers 202 with the
// session as it stands (the phase moves afterwards; follow the stream or poll the detail). An action the
// phase does not allow answers 409 `invalid_session_state` with the phase and the actions allowed now.

import { Paged } from "../../db/paging.ts";
import { bulkTerminate } from "../../domain/sessions/bulkTerminate.ts";
import { createSession } from "../../domain/sessions/createSession.ts";
import { gpuAvailability } from "../../domain/sessions/gpuAvailability.ts";
import { inspectResource, resourceEvents } from "../../domain/sessions/inspectResource.ts";
import { keepSessionRunning } from "../../domain/sessions/keepRunning.ts";
import { pauseSession } from "../../domain/sessions/pauseSession.ts";
import { credits, previewCost } from "../../domain/sessions/previewCost.ts";
import { getSession, listSessions } from "../../domain/sessions/readSessions.ts";
import { restartSession } from "../../domain/sessions/restartSession.ts";
import { resumeSession } from "../../domain/sessions/resumeSession.ts";
import { terminateSession } from "../../domain/sessions/terminateSession.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { BORROWED_NOTICE, presentSession } from "./presenter.ts";
import {
  BulkTerminateBody,
  BulkTerminateResult,
  CostPreview,
  CreateSessionBody,
  GpuAvailability,
  KubeEvents,
  ListSessionsQuery,
  PreviewCostBody,
  Session,
  SessionParams,
  SessionResource,
} from "./schemas.ts";
import { sessionEventsRoute } from "./stream.ts";

const TAGS = ["sessions"];

export const createSessionRoute = defineRoute({
  method: "post",
  path: "/api/v1/sessions",
  operationId: "createSession",
  tags: TAGS,
  summary: "Create a session",
  description: [
    "Checks the offering, preset and image, the GPU model against the fleet's inventory, the resource policy (GPUs and concurrent sessions per user, per project, per organization; allowed offerings) and the quotas, then creates the `Session` resource and answers 201 at once with phase `Pending`. Placement, dispatch and the pod follow; watch `GET /api/v1/sessions/events` or poll the detail.",
    "`cluster_id` pins the session: it runs only there and waits there (Queued, reason PinnedClusterFull) when that cluster is full. A volume whose claim exists on another cluster than the pin: 409 `volume_on_another_cluster`.",
    "Refusals: 403 `quota_exceeded` (details: `limit`, `value`, `current`, `requested`, `scope` for the resource policy; `limit`, `value`, `reserved`, `required` for credits, a wallet's spend limit or the budget); 422 `gpu_model_unavailable` when no cluster (or not the pinned one) has the offering's GPU model (details: `gpu_model`, `reported_models`); 400 `validation_failed` for unknown catalog names.",
    "Send `Idempotency-Key`: a repeat answers the first result and creates nothing.",
  ].join("\n\n"),
  auth: "user",
  body: CreateSessionBody,
  idempotent: true,
  audit: "session.create",
  errors: [
    "not_found",
    "quota_exceeded",
    "insufficient_credits",
    "volume_on_another_cluster",
    "volume_pool_not_shared",
    "volume_locked",
    "gpu_model_unavailable",
    "image_unsigned",
    "conflict",
  ],
  responses: { 201: Session },
  handler: async ({ deps, principal, body, audit, idempotency }) => {
    const v = await createSession(deps, principal, body, idempotency);
    audit.target("session", v.id);
    audit.organization(v.organizationId);
    return { status: 201, body: presentSession(v) };
  },
});

export const listSessionsRoute = defineRoute({
  method: "get",
  path: "/api/v1/sessions",
  operationId: "listSessions",
  tags: TAGS,
  summary: "List sessions (newest first)",
  description:
    "`scope=mine` (default) lists your sessions; `scope=all` lists what your role reaches: everything for super_admin, your organizations' sessions for organization admins, your projects' for project admins. Terminated sessions stay listed as history. This list is the polling fallback of the event stream.",
  auth: "user",
  query: ListSessionsQuery,
  responses: { 200: Paged(Session) },
  handler: async ({ deps, principal, query }) => {
    const page = await listSessions(deps, principal, query.scope, query, {
      ...(query.phase ? { phases: query.phase } : {}),
      ...(query.cluster_id ? { clusterId: query.cluster_id } : {}),
      ...(query.organization_id ? { organizationId: query.organization_id } : {}),
      ...(query.project_id ? { projectId: query.project_id } : {}),
    });
    return { status: 200, body: { data: page.data.map(presentSession), pagination: page.pagination } };
  },
});

export const gpuAvailabilityRoute = defineRoute({
  method: "get",
  path: "/api/v1/sessions/gpu-availability",
  operationId: "getGpuAvailability",
  tags: TAGS,
  summary: "Free and total GPUs by cluster and model",
  description:
    "From the operators' inventory (ready, schedulable nodes) and what sessions hold; `models` sums per GPU model and counts the sessions queued for it. Nodes of node pools not granted to any of the caller's organizations or projects are left out.",
  auth: "user",
  responses: { 200: GpuAvailability },
  handler: async ({ deps, principal }) => {
    const a = await gpuAvailability(deps, principal);
    return {
      status: 200,
      body: {
        clusters: a.clusters.map((c) => ({
          cluster_id: c.clusterId,
          cluster_name: c.clusterName,
          gpu_model: c.gpuModel,
          total: c.total,
          in_use: c.inUse,
          free: c.free,
          nodes: c.nodes,
          largest_node: c.largestNode,
          sharing: c.sharing,
          whole_free: c.wholeFree,
          slices_free: c.slicesFree,
          mig_free: c.migFree,
        })),
        models: a.models.map((m) => ({ gpu_model: m.gpuModel, total: m.total, free: m.free, queued: m.queued })),
      },
    };
  },
});

export const previewCostRoute = defineRoute({
  method: "post",
  path: "/api/v1/sessions/preview-cost",
  operationId: "previewSessionCost",
  tags: TAGS,
  summary: "The hourly credit rate of a session, the cost of a duration, and whether you could start it now",
  description: [
    "Rate = the offering's hourly rate × the session's GPUs ÷ the offering's GPUs (a preset's GPU count overrides the offering's), the same rate charging uses. Amounts are integer minor units as strings (1 credit = 1,000,000), and the same in credits as decimal strings; costs are rounded up to a unit.",
    "`can_start` says whether `POST /api/v1/sessions` with this offering and preset (and `organization_id`/`project_id`, resolved as on create) would be accepted now: the offering is enabled, the fleet has its GPU model, the resource policy (allowed offerings, concurrent sessions and GPUs per user, GPUs per project and organization), and the credits at the door (the wallets cover a 10-minute minimum run after the minimum runs owed to the organization's sessions already let in, within the wallets' daily and monthly spend limits, and the organization's budget is not spent). When false, `refusal` is what create would answer: e.g. `{code: \"quota_exceeded\", details: {limit, value, required, ...}}`.",
    "Nothing is created, written or locked: a concurrent create may still take what the preview saw. An `organization_id` or `project_id` that is not yours: 400 `validation_failed`.",
  ].join("\n\n"),
  auth: "user",
  body: PreviewCostBody,
  audit: "session.preview_cost",
  errors: ["not_found"],
  responses: { 200: CostPreview },
  handler: async ({ deps, principal, body }) => {
    const p = await previewCost(deps, principal, body);
    return {
      status: 200,
      body: {
        offering: p.offering,
        gpu_model: p.gpuModel,
        gpu_count: p.gpuCount,
        hourly_rate: p.hourlyRate,
        hourly_rate_credits: credits(BigInt(p.hourlyRate)),
        duration_seconds: p.durationSeconds,
        cost: p.cost,
        cost_credits: credits(BigInt(p.cost)),
        gpu_available_now: p.gpuAvailableNow,
        organization_id: p.organizationId,
        project_id: p.projectId,
        can_start: p.canStart,
        ...(p.refusal
          ? { refusal: { code: p.refusal.code, message: p.refusal.message, details: p.refusal.details } }
          : {}),
        capacity_class: p.capacityClass,
        rate_multiplier: p.rateMultiplier,
        full_hourly_rate: p.fullHourlyRate,
        reclaim_terms: p.reclaimTerms
          ? {
              grace_seconds: p.reclaimTerms.graceSeconds,
              min_runtime_seconds: p.reclaimTerms.minRuntimeSeconds,
              message: BORROWED_NOTICE,
            }
          : null,
        storage: {
          volumes: p.storage.volumes.map((v) => ({ volume: v.volume, size_gb: v.sizeGb })),
          size_gb: p.storage.sizeGb,
          gb_hour_rate: p.storage.gbHourRate,
          hourly_rate: p.storage.hourlyRate,
          cost: p.storage.cost,
        },
        total_cost: (BigInt(p.cost) + BigInt(p.storage.cost)).toString(),
        total_cost_credits: credits(BigInt(p.cost) + BigInt(p.storage.cost)),
      },
    };
  },
});

export const bulkTerminateRoute = defineRoute({
  method: "post",
  path: "/api/v1/sessions/bulk-terminate",
  operationId: "bulkTerminateSessions",
  tags: TAGS,
  summary: "Terminate several sessions",
  description:
    "One result per distinct id, in the order given: `accepted` with the session, or `refused` with the error a single terminate would have answered (`not_found` for a session you cannot see, `invalid_session_state` for one already terminating). Up to 100 ids.",
  auth: "user",
  body: BulkTerminateBody,
  audit: "session.bulk_terminate",
  errors: ["invalid_session_state"],
  responses: { 200: BulkTerminateResult },
  handler: async ({ deps, principal, body, audit }) => {
    const results = await bulkTerminate(deps, principal, body.ids);
    audit.detail("ids", body.ids);
    return {
      status: 200,
      body: {
        results: results.map((r) =>
          r.status === "accepted"
            ? { id: r.id, status: r.status, session: presentSession(r.session) }
            : { id: r.id, status: r.status, error: r.error },
        ),
      },
    };
  },
});

export const getSessionRoute = defineRoute({
  method: "get",
  path: "/api/v1/sessions/:sessionId",
  operationId: "getSession",
  tags: TAGS,
  summary: "A session, with its conditions",
  description:
    "Read from the live `Session` resource (its conditions say why it is in its phase); after the resource's retention, from the history. 404 for a session you may not see.",
  auth: "user",
  params: SessionParams,
  responses: { 200: Session },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentSession(await getSession(deps, principal, params.sessionId)),
  }),
});

function actionRoute(
  action: "pause" | "resume" | "restart" | "terminate",
  run: typeof pauseSession,
  summary: string,
  description: string,
) {
  return defineRoute({
    method: "post",
    path: `/api/v1/sessions/:sessionId/${action}`,
    operationId: `${action}Session`,
    tags: TAGS,
    summary,
    description: `${description}\n\nAnswers 202 with the session; its phase follows. 409 \`invalid_session_state\` when the phase does not allow it (details: \`phase\`, \`desired_state\`, \`allowed_actions\`).`,
    auth: "user",
    params: SessionParams,
    audit: `session.${action}`,
    errors:
      action === "resume"
        ? ["invalid_session_state", "quota_exceeded", "insufficient_credits"]
        : ["invalid_session_state"],
    responses: { 202: Session },
    handler: async ({ deps, principal, params, audit }) => {
      audit.target("session", params.sessionId);
      const v = await run(deps, principal, params.sessionId);
      audit.organization(v.organizationId);
      return { status: 202, body: presentSession(v) };
    },
  });
}

export const pauseRoute = actionRoute(
  "pause",
  pauseSession,
  "Pause a session",
  "Deletes the pod: the GPU returns to the pool and usage stops; volumes are kept. Allowed while Pending, Queued, Starting, Resuming, Running, Restarting or Unknown.",
);
export const resumeRoute = actionRoute(
  "resume",
  resumeSession,
  "Resume a paused session",
  "Places the session again (on its pinned cluster or its volumes' cluster when it has one) and starts a new pod; it may wait in the queue. Checked against policy and quota like a creation. Allowed while Paused.",
);
export const restartRoute = actionRoute(
  "restart",
  restartSession,
  "Restart a running session",
  "Replaces the pod on the same cluster (the old one is gone before the new one starts). Allowed while Running.",
);
export const terminateRoute = actionRoute(
  "terminate",
  terminateSession,
  "Terminate a session",
  "Removes everything on its GPU cluster; the session stays in the history. Allowed in every phase but Terminating and Terminated.",
);

export const keepRunningRoute = defineRoute({
  method: "post",
  path: "/api/v1/sessions/:sessionId/keep-running",
  operationId: "keepSessionRunning",
  tags: TAGS,
  summary: "Keep an idle session running",
  description:
    "The owner says they still need the session: it counts as activity now, so an idle warning is withdrawn and the idle pause moves a full idle timeout away. At most the resource policy's `keepRunningMax` times (default 3) per run period, then 409 `keep_running_limit_reached` (details: `used`, `max`). Owner only: 403 `forbidden` (`details.reason: not_owner`) for administrators who see it, 404 for others; 409 `invalid_session_state` unless Running. The time limit is not moved.",
  auth: "user",
  params: SessionParams,
  audit: "session.keep_running",
  responses: { 200: Session },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("session", params.sessionId);
    const v = await keepSessionRunning(deps, principal, params.sessionId);
    audit.organization(v.organizationId);
    return { status: 200, body: presentSession(v) };
  },
});

export const sessionResourceRoute = defineRoute({
  method: "get",
  path: "/api/v1/sessions/:sessionId/resource",
  operationId: "getSessionResource",
  tags: TAGS,
  summary: "The session's Session resource, as kubectl get -o yaml shows it (administrators)",
  description:
    "For administrators of the session's organization and super_admin: the object in the management cluster, as JSON and YAML. Others: 403 (404 for a session they cannot see).",
  auth: "user",
  params: SessionParams,
  responses: { 200: SessionResource },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: await inspectResource(deps, principal, params.sessionId),
  }),
});

export const sessionResourceEventsRoute = defineRoute({
  method: "get",
  path: "/api/v1/sessions/:sessionId/resource/events",
  operationId: "listSessionResourceEvents",
  tags: TAGS,
  summary: "The Kubernetes events of the session's resource, as kubectl describe lists them (administrators)",
  description:
    "Every transition (Scheduled, Queued, Started, Pausing, PausedByUser, RestartRequested, NodeLost, …) is an Event on the resource, oldest first. Kubernetes keeps events for an hour by default.",
  auth: "user",
  params: SessionParams,
  responses: { 200: KubeEvents },
  handler: async ({ deps, principal, params }) => {
    const events = await resourceEvents(deps, principal, params.sessionId);
    return {
      status: 200,
      body: {
        data: events.map((e) => ({
          type: e.type,
          reason: e.reason,
          message: e.message,
          count: e.count,
          first_timestamp: e.firstTimestamp,
          last_timestamp: e.lastTimestamp,
          source: e.source,
        })),
      },
    };
  },
});

// Static paths first: /api/v1/sessions/events would otherwise reach /:sessionId.
export const routes: RouteDef[] = [
  createSessionRoute,
  listSessionsRoute,
  sessionEventsRoute,
  gpuAvailabilityRoute,
  previewCostRoute,
  bulkTerminateRoute,
  getSessionRoute,
  pauseRoute,
  resumeRoute,
  restartRoute,
  terminateRoute,
  keepRunningRoute,
  sessionResourceRoute,
  sessionResourceEventsRoute,
];
