// An image build as its build cluster's operator runs it. The control plane writes one ImageBuild per
// build into the build cluster's builds namespace (with that cluster's registered credential); the
// operator turns it into the Dockerfile's ConfigMap and a Job (non-GPU node, limits, deadline, the
// namespace's egress-only NetworkPolicy), follows the Job and its log, and reports back through
// /internal (status, log batches, the digest the builder printed). Deleting it cancels the build: the
// operator deletes the Job. Everything the operator needs is resolved here, because a build cluster
// has no access to the management cluster or Berth's configuration.
import { z } from "zod";
import { ClusterId, immutable, ResourceName } from "../fields.ts";
import { defineKind, statusOf } from "../kind.ts";

const Reference = z
  .string()
  .min(1)
  .max(512)
  .regex(/^[^\s]+$/);

export const ImageBuildSpec = z.object({
  /** The build's REST id (`bld-…`); reports name it. */
  buildId: immutable(z.string().regex(/^bld-[a-z0-9]{1,60}$/)),
  /** The cluster this build was written to; an operator ignores builds that name another cluster. */
  cluster: immutable(ClusterId),
  /** The Dockerfile, as the member sent it (the API bounds its size; the Job reads it from a ConfigMap). */
  dockerfile: z.string().min(1).max(262_144),
  /** The catalog base image's reference, given to the Dockerfile as `ARG BASE_IMAGE`. */
  baseImage: immutable(Reference).optional(),
  /** Where the builder pushes: `<pull prefix>/<organization>/<owner>/<name>:<tag>`. */
  destination: immutable(Reference),
  /** Berth's registry speaks plain HTTP (a bed, a mirror). */
  insecureRegistry: z.boolean().default(false),
  /** A Secret of type dockerconfigjson in the builds namespace, for a registry that needs credentials. */
  pushSecret: ResourceName.optional(),
  /** The daemonless, rootless BuildKit image the Job runs. */
  builderImage: Reference,
  /** The Job's deadline. */
  timeoutSeconds: z.int().min(60).max(86_400),
  /** Where the build may connect besides DNS: Berth's registry and package mirrors (CIDRs). */
  egressCidrs: z.array(z.string().min(1).max(64)).max(64).default([]),
});
export type ImageBuildSpec = z.infer<typeof ImageBuildSpec>;

export const ImageBuildPhase = z.enum(["Pending", "Running", "Succeeded", "Failed"]);
export type ImageBuildPhase = z.infer<typeof ImageBuildPhase>;

/** Kept for `kubectl get`; the control plane reads reports from /internal, not this. */
export const ImageBuildStatus = statusOf({
  phase: ImageBuildPhase.optional(),
  job: ResourceName.optional(),
});
export type ImageBuildStatus = z.infer<typeof ImageBuildStatus>;

export const ImageBuildKind = defineKind({
  kind: "ImageBuild",
  plural: "imagebuilds",
  shortNames: ["imgb"],
  namespaced: true,
  description: "An image build as its build cluster's operator runs it (written by the control plane).",
  spec: ImageBuildSpec,
  status: ImageBuildStatus,
  printerColumns: [
    { name: "Build", type: "string", jsonPath: ".spec.buildId" },
    { name: "Destination", type: "string", jsonPath: ".spec.destination" },
    { name: "Phase", type: "string", jsonPath: ".status.phase" },
  ],
});
export const ImageBuild = ImageBuildKind.schema;
export type ImageBuild = z.infer<typeof ImageBuild>;
