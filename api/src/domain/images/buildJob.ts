// What the worker writes to a build cluster for one build: an ImageBuild resource in the builds namespace
// (BERTH_BUILD_NAMESPACE, default berth-builds), resolved so that the cluster's operator needs nothing
// else (controllers/src/builds/ turns it into the Job: non-GPU node, limits, deadline, the namespace's
// egress-only NetworkPolicy). Also: the digest line the builder prints last, which Berth trusts only as
// far as its own registry confirms it (the worker reads the manifest back).

import { type ImageBuild, ImageBuildKind } from "@berth/crds";
import type { ImagesConfig } from "../../config.ts";

export const DIGEST_LINE = /BERTH_IMAGE_DIGEST=(sha256:[a-f0-9]{64})/g;

export interface BuildResourceInput {
  buildId: string;
  /** The resource's name; the operator names the Job and ConfigMap after it. */
  name: string;
  clusterId: string;
  dockerfile: string;
  /** The catalog base image's reference, given to the Dockerfile as ARG BASE_IMAGE. */
  baseReference: string | null;
  /** Where to push: <pull prefix>/<org>/<owner>/<name>:<tag>. */
  destination: string;
  insecureRegistry: boolean;
  /** A Secret with a .dockerconfigjson for Berth's registry in the builds namespace, when it needs credentials. */
  pushSecret?: string | null | undefined;
}

export function imageBuildResource(config: ImagesConfig["builds"], i: BuildResourceInput): ImageBuild {
  return ImageBuildKind.build(
    {
      name: i.name,
      namespace: config.namespace,
      labels: { "app.kubernetes.io/part-of": "berth", "berth.dev/image-build": i.buildId },
    },
    {
      buildId: i.buildId,
      cluster: i.clusterId,
      dockerfile: i.dockerfile,
      ...(i.baseReference ? { baseImage: i.baseReference } : {}),
      destination: i.destination,
      insecureRegistry: i.insecureRegistry,
      ...(i.pushSecret ? { pushSecret: i.pushSecret } : {}),
      builderImage: config.builderImage,
      timeoutSeconds: config.timeoutSeconds,
      egressCidrs: config.egressCidrs,
    },
  );
}

/** The digest the build printed last, if any. */
export function reportedDigest(log: string): string | undefined {
  let last: string | undefined;
  for (const m of log.matchAll(DIGEST_LINE)) last = m[1];
  return last;
}
