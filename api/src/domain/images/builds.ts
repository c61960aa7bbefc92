// Image builds: a member's Dockerfile (optionally FROM a catalog image, as ARG BASE_IMAGE) built into a
// private image on a cluster an administrator marked for builds. The request is checked and written here
// (the image in state `building` counts among the member's 20; one build in flight per member, a bounded
// number per organization; identical inputs reuse the earlier build); the worker sends it to the build
// cluster as an ImageBuild resource (api/src/worker/builds.ts), whose operator runs the Job.

import { createHash, randomBytes } from "node:crypto";
import { KubeTransportError } from "@berth/controllers/kube";
import { buildResourceName, ImageBuildKind, resourcePath } from "@berth/crds";
import { findClusterById } from "../../db/operations/clusters/findClusterById.ts";
import { listBuildClusters, markBuildCluster, unmarkBuildCluster } from "../../db/operations/images/buildClusters.ts";
import { findBuild } from "../../db/operations/images/findBuild.ts";
import { findPrivateImage } from "../../db/operations/images/findPrivateImage.ts";
import { insertBuild } from "../../db/operations/images/insertBuild.ts";
import { listBuilds } from "../../db/operations/images/listBuilds.ts";
import type { ImageBuildRow } from "../../db/operations/images/types.ts";
import { updateActiveBuild } from "../../db/operations/images/updateBuild.ts";
import { deletePrivateImageRow } from "../../db/operations/images/updatePrivateImage.ts";
import type { Deps } from "../../deps.ts";
import { Conflict, DomainError, Forbidden, Invalid, NotFound, QuotaExceeded, Unavailable } from "../../errors.ts";
import { buildClusterRbac } from "../../rbac.ts";
import { getCatalog } from "../catalog/operations.ts";
import { images as catalogImages } from "../catalog/resources.ts";
import { permissionsOf } from "../clusters/permissions.ts";
import { missingPermissions } from "../clusters/probe.ts";
import { clustersOf } from "../clusters/runtime.ts";
import type { Principal } from "../identity/principal.ts";
import { resolveOwnership } from "../sessions/ownership.ts";
import { announceBuildEnd } from "./announce.ts";
import { imageBuildResource } from "./buildJob.ts";
import { emitImageUpdated } from "./events.ts";
import { type ImageKindName, newPrivateImageId } from "./privateImages.ts";
import { PATH_COMPONENT, TAG } from "./reference.ts";

export interface BuildInput {
  dockerfile: string;
  name: string;
  tag?: string | undefined;
  base_image?: string | undefined;
  kind?: ImageKindName | undefined;
  display_name?: string | undefined;
  organization_id?: string | undefined;
}

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
function newBuildId(): string {
  let s = "";
  for (const b of randomBytes(24)) if (b < 252 && s.length < 12) s += ALPHABET[b % 36];
  return `bld-${s.padEnd(12, "0")}`;
}

function configOf(deps: Pick<Deps, "config">) {
  const c = deps.config.images;
  if (!c?.registry)
    throw new Unavailable("image builds need Berth's registry, and none is configured (BERTH_REGISTRY_URL)");
  return c as typeof c & { registry: NonNullable<typeof c.registry> };
}

const grammar = (field: string, message: string) =>
  new DomainError("image_reference_invalid", message, {
    reason: "syntax",
    issues: [{ path: ["body", field], message, code: "syntax" }],
  });

/** Accepts a build (202), or answers the earlier identical one (reused). */
export async function requestBuild(
  deps: Deps,
  principal: Principal,
  input: BuildInput,
): Promise<{ build: ImageBuildRow; reused: boolean }> {
  const config = configOf(deps);
  const size = Buffer.byteLength(input.dockerfile);
  if (input.dockerfile.trim() === "")
    throw new DomainError("dockerfile_invalid", "the Dockerfile is empty", {
      reason: "empty",
      limit_bytes: config.builds.dockerfileMaxBytes,
    });
  if (size > config.builds.dockerfileMaxBytes)
    throw new DomainError(
      "dockerfile_invalid",
      `the Dockerfile is ${size} bytes, more than the ${config.builds.dockerfileMaxBytes} allowed`,
      {
        reason: "too_large",
        size_bytes: size,
        limit_bytes: config.builds.dockerfileMaxBytes,
      },
    );
  if (!PATH_COMPONENT.test(input.name) || input.name.length > 128)
    throw grammar("name", "a name is lowercase letters and digits separated by '.', '_', '__' or '-'");
  const tag = input.tag ?? "latest";
  if (!TAG.test(tag))
    throw grammar("tag", "a tag is letters, digits, '_', '.' and '-' (at most 128), not starting with '.' or '-'");
  let baseReference: string | null = null;
  if (input.base_image) {
    try {
      baseReference = String((await getCatalog(deps, principal, catalogImages, input.base_image)).spec.image);
    } catch (e) {
      if (e instanceof NotFound)
        throw new Invalid("the request is invalid", [
          { path: ["body", "base_image"], message: "no such image in the catalog", code: "invalid_reference" },
        ]);
      throw e;
    }
  }
  const { organizationId } = await resolveOwnership(deps, principal, input);
  const clusters = await usableBuildClusters(deps);
  const clusterId = clusters[Math.floor(Math.random() * clusters.length)];
  if (!clusterId)
    throw new DomainError(
      "no_build_cluster",
      "no cluster of the fleet is marked for image builds; ask an administrator to mark one",
    );

  const inputHash = createHash("sha256")
    .update(JSON.stringify({ dockerfile: input.dockerfile, base: baseReference, platforms: config.platforms }))
    .digest("hex");
  const now = deps.clock.now();
  const imageId = newPrivateImageId();
  const id = newBuildId();
  const repository = `${organizationId}/${principal.userId}/${input.name}`.toLowerCase();
  const outcome = await insertBuild(
    deps.db,
    {
      id: imageId,
      owner_id: principal.userId,
      organization_id: organizationId,
      source: "build",
      source_reference: null,
      display_name: input.display_name ?? `${input.name}:${tag}`,
      kind: input.kind ?? "jupyterlab",
      repository,
      tag,
      state: "building",
      created_at: now,
      updated_at: now,
    },
    {
      id,
      owner_id: principal.userId,
      organization_id: organizationId,
      image_id: imageId,
      input_hash: inputHash,
      dockerfile: input.dockerfile,
      base_image: input.base_image ?? null,
      base_reference: baseReference,
      cluster_id: clusterId,
      job_name: buildResourceName(id),
      created_at: now,
    },
    { images: config.perMember, perOrganization: config.builds.perOrganization },
  );
  if ("reuse" in outcome) return { build: outcome.reuse, reused: true };
  if ("refused" in outcome) {
    if (outcome.refused === "images")
      throw new QuotaExceeded(
        `you hold ${outcome.count} private images (ready, importing or building), the most a member may; delete one first`,
        { quota: "private_images_per_member", count: outcome.count, limit: config.perMember },
      );
    const member = outcome.refused === "member_build";
    throw new Conflict(
      member
        ? "you have a build in flight; wait for it or cancel it"
        : `your organization has ${outcome.count} builds in flight, the most it may`,
      {
        scope: member ? "member" : "organization",
        count: outcome.count,
        limit: member ? 1 : config.builds.perOrganization,
      },
      "build_limit_reached",
    );
  }
  await emitImageUpdated(deps.db, outcome.image);
  return { build: outcome.build, reused: false };
}

/** Marked clusters that are still registered. */
async function usableBuildClusters(deps: Deps): Promise<string[]> {
  const marked = await listBuildClusters(deps.db);
  const out: string[] = [];
  for (const m of marked) {
    const c = await findClusterById(deps.db, m.cluster_id);
    if (c && !c.deregistered_at) out.push(m.cluster_id);
  }
  return out;
}

export async function listMyBuilds(deps: Deps, principal: Principal): Promise<ImageBuildRow[]> {
  return listBuilds(deps.db, principal.userId);
}

export async function getBuild(deps: Deps, principal: Principal, id: string): Promise<ImageBuildRow> {
  const b = await findBuild(deps.db, id);
  if (!b || (b.owner_id !== principal.userId && !principal.isSuperAdmin)) throw new NotFound("image build", id);
  return b;
}

/**
 * Cancels a build in flight: one not yet sent to its build cluster ends here; otherwise the worker deletes
 * its ImageBuild resource (the operator deletes the Job) and ends it. Either way its image's slot is freed.
 */
export async function cancelBuild(deps: Deps, principal: Principal, id: string): Promise<ImageBuildRow> {
  const b = await getBuild(deps, principal, id);
  if (b.state !== "queued" && b.state !== "running")
    throw new Conflict(`the build is ${b.state}; only a queued or running build can be cancelled`, { state: b.state });
  const now = deps.clock.now();
  if (!b.dispatched_at) {
    const done = await deps.db.transaction(async (tx) => {
      const row = await updateActiveBuild(tx, id, { state: "cancelled", finished_at: now, cancel_requested: true });
      if (!row) return undefined;
      const image = await findPrivateImage(tx, b.image_id);
      await deletePrivateImageRow(tx, b.image_id);
      await announceBuildEnd(tx, row, image, now);
      return row;
    });
    if (done) return done;
  }
  return (await updateActiveBuild(deps.db, id, { cancel_requested: true })) ?? (await getBuild(deps, principal, id));
}

// --- clusters marked for builds (super_admins) --------------------------------------------------------------

export async function listBuildClustersFor(deps: Deps, principal: Principal) {
  if (!principal.isSuperAdmin) throw new Forbidden("only a super_admin sees the build clusters");
  return listBuildClusters(deps.db);
}

/**
 * Marks a cluster for builds once its registered credential is seen to do what the worker does there
 * (buildClusterRbac: one SelfSubjectAccessReview per verb) and a dry-run ImageBuild is accepted in its
 * builds namespace (the namespace and the resource definition exist). `pushSecret` names a Secret that
 * builds push with; only its name is kept.
 */
export async function markForBuilds(
  deps: Deps,
  principal: Principal,
  clusterId: string,
  opts: { pushSecret?: string | null | undefined } = {},
): Promise<void> {
  if (!principal.isSuperAdmin) throw new Forbidden("only a super_admin marks clusters for builds");
  const c = await findClusterById(deps.db, clusterId);
  if (!c || c.deregistered_at) throw new NotFound("cluster", clusterId);
  await checkBuildCluster(deps, clusterId);
  await markBuildCluster(deps.db, {
    cluster_id: clusterId,
    marked_by: principal.userId,
    marked_at: deps.clock.now(),
    push_secret: opts.pushSecret ?? null,
  });
}

async function checkBuildCluster(deps: Deps, clusterId: string): Promise<void> {
  const builds = deps.config.images?.builds;
  if (!builds) throw new Unavailable("image builds are not configured");
  const rt = clustersOf(deps);
  const resource = await rt.store.getCluster(clusterId);
  if (!resource) throw new NotFound("cluster", clusterId);
  const kube = await rt.clients.forCluster(resource);
  const ns = builds.namespace;
  try {
    const signal = AbortSignal.timeout(30_000);
    const missing = await missingPermissions(kube, permissionsOf(buildClusterRbac(ns)), signal);
    if (missing.length > 0)
      throw new DomainError(
        "build_cluster_not_ready",
        `the cluster's registered credential lacks permissions builds need: ${missing.join(", ")}`,
        { namespace: ns, missing_permissions: missing },
      );
    const probe = imageBuildResource(builds, {
      buildId: "bld-markcheck",
      name: "build-markcheck",
      clusterId,
      dockerfile: "FROM scratch\n",
      baseReference: null,
      destination: "registry.invalid/check/check:latest",
      insecureRegistry: false,
    });
    const tried = await kube.request("POST", resourcePath(ImageBuildKind, { namespace: ns }), {
      body: probe,
      query: { dryRun: "All" },
      signal,
    });
    if (tried.status === 404)
      throw new DomainError(
        "build_cluster_not_ready",
        `the cluster has no namespace ${ns} with the ImageBuild resource; install the operator with builds on (BERTH_OPERATOR_BUILDS_NAMESPACE=${ns})`,
        { namespace: ns, reason: "not_installed" },
      );
    if (tried.status >= 300)
      throw new DomainError("build_cluster_not_ready", `a trial ImageBuild was refused (${tried.status})`, {
        namespace: ns,
        reason: "refused",
        status: tried.status,
      });
  } catch (e) {
    // A cluster that does not answer is a dependency down (503, as for node actions), not a server fault.
    if (e instanceof KubeTransportError)
      throw new Unavailable(`cluster ${clusterId} did not answer: ${e.message}`, {
        cluster_id: clusterId,
        reason: e.reason,
      });
    throw e;
  }
}

export async function unmarkForBuilds(deps: Deps, principal: Principal, clusterId: string): Promise<void> {
  if (!principal.isSuperAdmin) throw new Forbidden("only a super_admin marks clusters for builds");
  if (!(await unmarkBuildCluster(deps.db, clusterId))) throw new NotFound("build cluster", clusterId);
}
