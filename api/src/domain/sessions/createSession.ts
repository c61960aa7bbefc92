// POST /api/v1/sessions: check, record, create the Session resource, answer at once (phase Pending).
// Placement, dispatch and the pod happen in the worker and the cluster's operator; the answer's id is
// what the SSE stream and the detail route follow.
// The parts: ownership.ts (whose it is), gpuRefusals.ts (whether the fleet can run its GPUs at all),
// checkVolumes.ts (what it may mount), admission.ts (limits, quota and credits, with the row),
// writeResource.ts (the Session resource, safe to retry); here, the order of those steps and the body.

import {
  ANNOTATIONS,
  type CapacityClass,
  fractionLabel,
  gpuOccupancy,
  LABELS,
  labelValue,
  newSessionId,
  organizationNamespace,
  type Session,
  SessionKind,
  sessionIdFromSeed,
  sessionResourceName,
} from "@berth/crds";
import { findClusterById } from "../../db/operations/clusters/findClusterById.ts";
import { findPrivateImage } from "../../db/operations/images/findPrivateImage.ts";
import { findSessionById } from "../../db/operations/sessions/findSessionById.ts";
import { insertSessionEvents } from "../../db/operations/sessions/sessionEvents.ts";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import { failPendingSession } from "../../db/operations/sessions/unmadeCreates.ts";
import { type SessionView, viewFromRow } from "../../db/operations/sessions/view.ts";
import type { Deps } from "../../deps.ts";
import { Forbidden, Invalid, Unavailable } from "../../errors.ts";
import { checkReclaimAsks, reclaimPolicyOf } from "../catalog/reclaimPolicy.ts";
import type { Principal } from "../identity/principal.ts";
import { scopeOf } from "../identity/scope.ts";
import { assertSigned } from "../images/trust.ts";
import { migOfOffering, migRefusal } from "../mig/offered.ts";
import { admitCreate } from "./admission.ts";
import { ratePermilleOf } from "./capacityClass.ts";
import { effectiveLimit } from "./checkQuota.ts";
import { checkVolumes, type VolumeAsk } from "./checkVolumes.ts";
import { sessionEventOf } from "./events.ts";
import { gpuModelRefusal, gpuSharingRefusal, sliceOfOffering } from "./gpuRefusals.ts";
import { issue, resolveOwnership } from "./ownership.ts";
import { sessionPath, sessionsRuntimeOf } from "./runtime.ts";
import { writeResource } from "./writeResource.ts";

export interface CreateSessionInput {
  offering: string;
  preset: string;
  image: string;
  name?: string;
  cluster_id?: string;
  organization_id?: string;
  project_id?: string;
  priority?: number;
  volumes?: VolumeAsk[];
  /** Within the resource policy's bounds (docs/dev/idle-and-limits.md). */
  idle_timeout_minutes?: number;
  max_runtime_minutes?: number;
  /** docs/dev/fair-share.md; absent: guaranteed. */
  capacity_class?: CapacityClass;
}

/**
 * Why a name is not a usable image: one of the caller's own private images that is not in the catalog
 * (yet, or at all) says so in words, its build or import still running or failed; anything else is
 * "no such image", whoever else's it is.
 */
async function missingImage(deps: Deps, principal: Principal, name: string): Promise<string> {
  const own = /^img-[a-z0-9]{12}$/.test(name) ? await findPrivateImage(deps.db, name) : undefined;
  if (!own || own.owner_id !== principal.userId) return "no such image";
  const how = own.source === "build" ? "build" : "import";
  if (own.state === "failed")
    return `this image's ${how} failed${own.failure_reason ? `: ${own.failure_reason}` : ""}; it cannot run`;
  if (own.state !== "ready") return `this image is not ready: its ${how} is still running`;
  return "no such image";
}

export async function createSession(
  deps: Deps,
  principal: Principal,
  input: CreateSessionInput,
  idempotency?: { seed: string; tookOver: boolean },
): Promise<SessionView> {
  const rt = sessionsRuntimeOf(deps);
  // With an Idempotency-Key the id comes from its claim, so a create that takes the key over after a crash
  // finds what the first attempt made (before any check, which would count that session against it).
  const id = idempotency ? sessionIdFromSeed(idempotency.seed) : newSessionId();
  if (idempotency?.tookOver) {
    const earlier = await findSessionById(deps.db, id);
    if (earlier) return finishEarlierCreate(deps, earlier);
  }
  const { organizationId, projectId } = await resolveOwnership(deps, principal, input);

  const [offering, preset, image] = await Promise.all([
    rt.catalog.offering(input.offering),
    rt.catalog.preset(input.preset),
    rt.catalog.image(input.image),
  ]);
  const bad = [
    ...(!offering?.spec.enabled
      ? [issue("offering", offering ? "this offering is disabled" : "no such offering")]
      : []),
    ...(!preset ? [issue("preset", "no such preset")] : []),
    ...(!image || (image.spec.visibility === "private" && image.spec.owner !== principal.userId)
      ? [issue("image", await missingImage(deps, principal, input.image))]
      : []),
  ];
  if (bad.length > 0 || !offering || !preset || !image) throw new Invalid("the request is invalid", bad);
  await assertSigned(deps, image.spec.image, "image");
  const gpuModel = offering.spec.gpuModel;
  const gpuSlice = sliceOfOffering(offering);
  const mig = migOfOffering(offering);
  // A slice is of one card: a GPU preset cannot make it several.
  if ((gpuSlice || mig) && preset.spec.gpuCount > 1)
    throw new Invalid("the request is invalid", [
      issue(
        "preset",
        `the preset asks for ${preset.spec.gpuCount} GPUs; the offering is ${mig ? `MIG ${mig.profile}` : fractionLabel(gpuSlice?.slicesPerCard)} of one card: pick a compute preset or a one-GPU preset`,
      ),
    ]);
  const gpuCount = gpuSlice || mig ? 1 : preset.spec.gpuCount > 0 ? preset.spec.gpuCount : offering.spec.gpuCount;

  if (input.cluster_id) {
    const cluster = await findClusterById(deps.db, input.cluster_id);
    if (!cluster || cluster.deregistered_at)
      throw new Invalid("the request is invalid", [issue("cluster_id", "no such cluster")]);
  }
  const unavailable = mig
    ? await migRefusal(deps, input.offering, gpuModel, mig.profile, input.cluster_id)
    : ((await gpuModelRefusal(deps, input.offering, gpuModel, input.cluster_id)) ??
      (gpuSlice
        ? await gpuSharingRefusal(deps, input.offering, gpuModel, gpuSlice.slicesPerCard, input.cluster_id)
        : undefined));
  if (unavailable) throw unavailable;

  const namespace = organizationNamespace(organizationId);
  const volumes = await checkVolumes(deps, principal, namespace, input);

  const scope = scopeOf(principal);
  const admin = scope.all || scope.adminOrganizations.has(organizationId);
  const priority = input.priority ?? 0;
  if (!admin && priority > 0) {
    const max = effectiveLimit(await rt.catalog.policies(), "maxPriority", { organizationId, projectId });
    if (!max || priority > max.value)
      throw new Forbidden(`members may set a priority of at most ${max?.value ?? 0}`, {
        max_priority: max?.value ?? 0,
        requested: priority,
      });
  }

  const asks = { idleTimeoutMinutes: input.idle_timeout_minutes, maxRuntimeMinutes: input.max_runtime_minutes };
  if (asks.idleTimeoutMinutes !== undefined || asks.maxRuntimeMinutes !== undefined)
    checkReclaimAsks(
      reclaimPolicyOf(await rt.catalog.policies(), { organizationId, projectId, userId: principal.userId }),
      asks,
    );

  const capacityClass = input.capacity_class ?? "guaranteed";
  const crName = sessionResourceName(id);
  const now = deps.clock.now();
  const row = await admitCreate(
    deps,
    {
      kind: "create",
      ownerId: principal.userId,
      organizationId,
      projectId,
      offering,
      gpuCount,
      gpuOccupancy: gpuOccupancy(gpuCount, gpuSlice?.slicesPerCard, mig?.share),
      capacityClass,
    },
    {
      id,
      cr_name: crName,
      namespace,
      owner_id: principal.userId,
      organization_id: organizationId,
      project_id: projectId,
      display_name: input.name ?? null,
      offering: input.offering,
      preset: input.preset,
      image: input.image,
      gpu_model: gpuModel,
      gpu_count: gpuCount,
      hourly_credit_rate: offering.spec.hourlyCreditRate,
      offering_gpu_count: offering.spec.gpuCount,
      gpu_slices_per_card: gpuSlice?.slicesPerCard ?? null,
      gpu_slice_memory_mib: gpuSlice?.memoryMib ?? null,
      gpu_mig_profile: mig?.profile ?? null,
      gpu_share_num: mig?.share.num ?? null,
      gpu_share_den: mig?.share.den ?? null,
      cluster_pin: input.cluster_id ?? null,
      priority,
      capacity_class: capacityClass,
      rate_permille: ratePermilleOf(capacityClass, offering),
      created_at: now,
    },
  );

  const body: Session = SessionKind.build(
    {
      name: crName,
      namespace,
      labels: {
        [LABELS.partOf]: "berth",
        [LABELS.sessionId]: id,
        [LABELS.owner]: labelValue(principal.userId),
        [LABELS.organization]: labelValue(organizationId),
        ...(projectId ? { [LABELS.project]: labelValue(projectId) } : {}),
      },
      annotations: { [ANNOTATIONS.createdBy]: principal.email, [ANNOTATIONS.createdAt]: now.toISOString() },
    },
    {
      owner: principal.userId,
      organization: organizationId,
      ...(projectId ? { project: projectId } : {}),
      ...(input.name ? { displayName: input.name } : {}),
      offering: input.offering,
      preset: input.preset,
      image: input.image,
      gpuCount,
      ...(gpuSlice ? { gpuSlice } : {}),
      ...(mig ? { migProfile: mig.profile } : {}),
      volumes,
      ...(input.cluster_id ? { clusterPin: input.cluster_id } : {}),
      desiredState: "Running",
      priority,
      ...(asks.idleTimeoutMinutes !== undefined ? { idleTimeoutMinutes: asks.idleTimeoutMinutes } : {}),
      ...(asks.maxRuntimeMinutes !== undefined ? { maxRuntimeMinutes: asks.maxRuntimeMinutes } : {}),
      capacityClass,
    },
  );
  try {
    await writeResource(rt, namespace, crName, body);
  } catch (e) {
    // The row must not count as live (limits, credits) for a session that does not exist.
    await failPendingSession(deps.db, id, (e as Error).message.slice(0, 1000), now).catch((err: unknown) =>
      deps.log.error({ err, session: id }, "could not mark a session whose create failed"),
    );
    throw new Unavailable("the session could not be created in the management cluster; retry", {
      reason: (e as Error).message,
    });
  }
  // The session exists now: a lost stream event must not turn its create into an error (the client's
  // retry would make a second one). The worker's phase changes follow on the stream.
  await insertSessionEvents(deps.db, [sessionEventOf("session.created", row, viewFromRow(row))]).catch((err: unknown) =>
    deps.log.warn({ err, session: id }, "could not record the session.created event"),
  );
  return viewFromRow(row);
}

/**
 * The session an interrupted create with the same key made: the answer when its resource exists. A row
 * without one (the crash came between them) is marked failed like a create whose resource failed, and the
 * client is told to retry: the key is released with the 503 and the retry makes a new session.
 */
async function finishEarlierCreate(deps: Deps, row: SessionRow): Promise<SessionView> {
  const rt = sessionsRuntimeOf(deps);
  if (row.phase !== "Failed") {
    const back = await rt.kube.request("GET", sessionPath(row.namespace, row.cr_name));
    if (back.status === 200) return viewFromRow(row);
    if (back.status !== 404)
      throw new Unavailable("the management cluster did not answer; retry", { status: back.status });
    await failPendingSession(
      deps.db,
      row.id,
      "the create was interrupted before its resource was written",
      deps.clock.now(),
    );
  }
  throw new Unavailable("an earlier attempt with this Idempotency-Key was interrupted; retry", { session_id: row.id });
}
