// POST /api/v1/sessions: check, record, create the Session resource, answer at once (phase Pending).
// Placement, dispatch and the pod happen in the worker and the cluster's operator; the answer's id is
// what the SSE stream and the detail route follow.

import {
  ANNOTATIONS,
  type CapacityClass,
  fractionLabel,
  type GpuSlice,
  gpuOccupancy,
  LABELS,
  labelValue,
  newSessionId,
  type Offering,
  organizationNamespace,
  type Session,
  SessionKind,
  sessionIdFromSeed,
  sessionResourceName,
  sliceOf,
  VOLUME_ID,
  volumeResourceName,
} from "@berth/crds";
import { findClusterById } from "../../db/operations/clusters/findClusterById.ts";
import { findPrivateImage } from "../../db/operations/images/findPrivateImage.ts";
import { findProjectById } from "../../db/operations/projects/findProjectById.ts";
import { findSessionById } from "../../db/operations/sessions/findSessionById.ts";
import { fleetModels } from "../../db/operations/sessions/fleetModels.ts";
import { insertSessionEvents } from "../../db/operations/sessions/sessionEvents.ts";
import { sharingClusters } from "../../db/operations/sessions/sharingClusters.ts";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import { failPendingSession } from "../../db/operations/sessions/unmadeCreates.ts";
import { type SessionView, viewFromRow } from "../../db/operations/sessions/view.ts";
import type { Deps } from "../../deps.ts";
import { Conflict, DomainError, Forbidden, Invalid, Unavailable } from "../../errors.ts";
import { checkReclaimAsks, reclaimPolicyOf } from "../catalog/reclaimPolicy.ts";
import type { Principal } from "../identity/principal.ts";
import { scopeOf } from "../identity/scope.ts";
import { assertSigned } from "../images/trust.ts";
import { migOfOffering, migRefusal } from "../mig/offered.ts";
import { admitCreate } from "./admission.ts";
import { ratePermilleOf } from "./capacityClass.ts";
import { effectiveLimit } from "./checkQuota.ts";
import { sessionEventOf } from "./events.ts";
import { sessionPath, sessionsRuntimeOf } from "./runtime.ts";

export interface CreateSessionInput {
  offering: string;
  preset: string;
  image: string;
  name?: string;
  cluster_id?: string;
  organization_id?: string;
  project_id?: string;
  priority?: number;
  volumes?: { volume: string; mount_path?: string; read_only?: boolean }[];
  /** Within the resource policy's bounds (docs/dev/idle-and-limits.md). */
  idle_timeout_minutes?: number;
  max_runtime_minutes?: number;
  /** docs/dev/fair-share.md; absent: guaranteed. */
  capacity_class?: CapacityClass;
}

const issue = (field: string, message: string) => ({ path: ["body", field], message, code: "invalid_reference" });

/** Which organization the session belongs to: named, implied by the project, or the caller's only one. */
export async function resolveOwnership(
  deps: Deps,
  p: Principal,
  input: Pick<CreateSessionInput, "organization_id" | "project_id">,
): Promise<{ organizationId: string; projectId: string | null }> {
  const scope = scopeOf(p);
  let organizationId = input.organization_id;
  let projectId: string | null = null;
  if (input.project_id) {
    const project = await findProjectById(deps.db, input.project_id);
    const member =
      project && (scope.all || scope.adminOrganizations.has(project.organization_id) || scope.projects.has(project.id));
    if (!project || !member)
      throw new Invalid("the request is invalid", [issue("project_id", "no such project among yours")]);
    if (organizationId && organizationId !== project.organization_id)
      throw new Invalid("the request is invalid", [issue("project_id", "the project belongs to another organization")]);
    organizationId = project.organization_id;
    projectId = project.id;
  }
  if (!organizationId) {
    const mine = [...scope.organizations];
    if (mine.length !== 1) {
      throw new Invalid("the request is invalid", [
        issue(
          "organization_id",
          mine.length === 0
            ? "you belong to no organization; name one"
            : "you belong to several organizations; name one",
        ),
      ]);
    }
    organizationId = mine[0] as string;
  }
  if (!scope.all && !scope.organizations.has(organizationId))
    throw new Invalid("the request is invalid", [issue("organization_id", "no such organization among yours")]);
  return { organizationId, projectId };
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

/**
 * Creates the Session resource. When no answer came (a timeout, a reset) or the name is taken (a retried
 * POST landed), the apiserver may have created it: it is read back, and one that exists is the create
 * done; otherwise it is deleted, so that a session answered as failed does not come to life through the
 * worker.
 */
async function writeResource(
  rt: ReturnType<typeof sessionsRuntimeOf>,
  namespace: string,
  name: string,
  body: Session,
): Promise<void> {
  await rt.ensureNamespace(namespace);
  const readBack = async (failure: Error): Promise<void> => {
    const back = await rt.kube.request("GET", sessionPath(namespace, name)).catch(() => undefined);
    if (back?.status === 200) return;
    // Unreadable, or not there yet (a POST still on its way can land after the read): delete it anyway.
    await rt.kube.request("DELETE", sessionPath(namespace, name)).catch(() => undefined);
    throw failure;
  };
  let res: { status: number; body: unknown };
  try {
    res = await rt.kube.request("POST", sessionPath(namespace), { body });
  } catch (e) {
    return readBack(e as Error);
  }
  if (res.status === 201) return;
  const failure = new Error(
    `creating the Session resource answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`,
  );
  // 409: the name is this create's alone, so a retried POST (the client's, on a stale connection) landed.
  if (res.status === 409) return readBack(failure);
  throw failure;
}

/** The slice a fractional offering guarantees, fixed on the session at creation; undefined for whole cards. */
export function sliceOfOffering(offering: Offering): GpuSlice | undefined {
  const n = offering.spec.slicesPerCard;
  if (n === undefined || offering.spec.gpuMemoryMib === undefined) return undefined;
  return sliceOf(offering.spec.gpuMemoryMib, n);
}

/**
 * 422 `gpu_sharing_unavailable` when the offering is a slice and no cluster with its model (or not the
 * pinned one) runs a GPU sharing layer: nothing could isolate the slice.
 */
export async function gpuSharingRefusal(
  deps: Deps,
  offering: string,
  gpuModel: string,
  slicesPerCard: number,
  clusterId?: string,
): Promise<DomainError | undefined> {
  const sharing = await sharingClusters(deps.db, gpuModel);
  if (clusterId ? sharing.includes(clusterId) : sharing.length > 0) return undefined;
  return new DomainError(
    "gpu_sharing_unavailable",
    clusterId
      ? `cluster ${clusterId} runs no GPU sharing layer for ${gpuModel}: a ${fractionLabel(slicesPerCard)} slice cannot go there`
      : `no cluster with ${gpuModel} runs a GPU sharing layer: a ${fractionLabel(slicesPerCard)} slice cannot be placed; pick a whole-card offering`,
    {
      gpu_model: gpuModel,
      offering,
      fraction: fractionLabel(slicesPerCard),
      sharing_clusters: sharing,
      supported_layers: ["hami"],
      ...(clusterId ? { cluster_id: clusterId } : {}),
    },
  );
}

/** 422 `gpu_model_unavailable` when no cluster of the fleet (or not the pinned one) has the model. */
export async function gpuModelRefusal(
  deps: Deps,
  offering: string,
  gpuModel: string,
  clusterId?: string,
): Promise<DomainError | undefined> {
  const models = await fleetModels(deps.db, clusterId);
  if (models.includes(gpuModel)) return undefined;
  const fleet = clusterId ? await fleetModels(deps.db) : models;
  return new DomainError(
    "gpu_model_unavailable",
    clusterId ? `cluster ${clusterId} has no ${gpuModel}` : `no cluster of the fleet has ${gpuModel}`,
    {
      gpu_model: gpuModel,
      offering,
      reported_models: clusterId ? models : fleet,
      ...(clusterId ? { cluster_id: clusterId, fleet_models: fleet } : {}),
    },
  );
}

export async function checkVolumes(
  deps: Deps,
  principal: Principal,
  namespace: string,
  input: Pick<CreateSessionInput, "volumes" | "cluster_id">,
): Promise<Session["spec"]["volumes"]> {
  const out: Session["spec"]["volumes"] = [];
  const scope = scopeOf(principal);
  for (const [i, v0] of (input.volumes ?? []).entries()) {
    // A volume is named by its id (vol_…) or its resource name (vol-…); the session records the latter.
    const v = { ...v0, volume: VOLUME_ID.test(v0.volume) ? volumeResourceName(v0.volume) : v0.volume };
    const vol = await sessionsRuntimeOf(deps).catalog.volume(namespace, v.volume);
    const owned =
      vol &&
      (scope.all ||
        (vol.spec.owner.kind === "user" && vol.spec.owner.id === principal.userId) ||
        (vol.spec.owner.kind === "project" && scope.projects.has(vol.spec.owner.id)) ||
        scope.adminOrganizations.has(vol.spec.organization));
    const shares = (vol?.spec.shares ?? []).filter(
      (s) => (s.kind === "user" && s.id === principal.userId) || (s.kind === "project" && scope.projects.has(s.id)),
    );
    if (!vol || (!owned && shares.length === 0))
      throw new Invalid("the request is invalid", [
        { path: ["body", "volumes", i, "volume"], message: "no such volume", code: "invalid_reference" },
      ]);
    // Deleted and kept only for its grace period (docs/dev/storage.md): restore it to mount it.
    if (vol.metadata.annotations?.[ANNOTATIONS.volumePurgeAfter])
      throw new Invalid("the request is invalid", [
        {
          path: ["body", "volumes", i, "volume"],
          message: "this volume was deleted; restore it (POST /api/v1/storage/volumes/{id}/restore) to mount it",
          code: "invalid_reference",
        },
      ]);
    if (vol.spec.locked)
      throw new Conflict(
        `volume ${v.volume} is locked`,
        { volume: v.volume, reason: vol.spec.lockReason ?? null },
        "volume_locked",
      );
    const bound = vol.status?.boundCluster;
    if (bound && input.cluster_id && bound !== input.cluster_id) {
      // When the claim goes, as the worker records it (docs/dev/storage.md): a time once no session uses
      // it, "being released" once the release began, else its idle time after the last session ends.
      const st = vol.status ?? {};
      const idle = st.idleReleaseSeconds;
      const when = st.releasingSince
        ? "it is being released now"
        : st.releaseAfter
          ? `it is released at ${st.releaseAfter} unless a session mounts it first`
          : idle !== undefined
            ? `it is released ${Math.round(idle / 60)} minutes after its last session ends`
            : "it is released some time after its last session ends";
      throw new Conflict(
        `volume ${v.volume} has its claim on ${bound}; the session cannot run on ${input.cluster_id} (${when}). Pin it to ${bound} or leave the cluster to placement.`,
        {
          volume: v.volume,
          bound_cluster: bound,
          requested_cluster: input.cluster_id,
          releasing: st.releasingSince !== undefined,
          release_after: st.releaseAfter ?? null,
          idle_release_seconds: idle ?? null,
        },
        "volume_on_another_cluster",
      );
    }
    // A pool shared with selected clusters: its volumes mount only there.
    const pool = vol.spec.pool ? await sessionsRuntimeOf(deps).catalog.pool(vol.spec.pool) : undefined;
    if (pool?.spec.sharing === "selected" && input.cluster_id && !pool.spec.clusters?.includes(input.cluster_id))
      throw new Conflict(
        `volume ${v.volume} is on pool ${vol.spec.pool}, shared only with ${pool.spec.clusters?.join(", ")}`,
        {
          volume: v.volume,
          pool: vol.spec.pool,
          clusters: pool.spec.clusters ?? [],
          requested_cluster: input.cluster_id,
        },
        "volume_pool_not_shared",
      );
    // Reached only through read-only shares: mounted read-only, and asking to write is refused.
    const writable = owned || shares.some((s) => s.access === "ReadWrite");
    if (!writable && v.read_only === false)
      throw new Forbidden(`volume ${v.volume} is shared with you read-only`, { volume: v.volume, access: "ReadOnly" });
    out.push({
      volume: v.volume,
      readOnly: v.read_only ?? !writable,
      ...(v.mount_path ? { mountPath: v.mount_path } : {}),
    });
  }
  return out;
}
