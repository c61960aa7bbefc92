// Image builds: ask for one (202; an identical earlier build answers 200 with `reused`), list and read
// yours, cancel, follow the log live (server-sent events that resume), and, for super_admins, the
// clusters marked for builds. Registered before /image-builds/:id would be (static paths first).

import { z } from "zod";
import { followBuildLog } from "../../domain/images/buildLog.ts";
import {
  cancelBuild,
  getBuild,
  listBuildClustersFor,
  listMyBuilds,
  markForBuilds,
  requestBuild,
  unmarkForBuilds,
} from "../../domain/images/builds.ts";
import { Invalid } from "../../errors.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentBuild, presentBuildCluster } from "./presenter.ts";
import {
  BuildClusterList,
  BuildIdParams,
  ClusterIdParams,
  CreateImageBuildBody,
  ImageBuild,
  ImageBuildList,
  MarkBuildClusterBody,
} from "./schemas.ts";

export const listBuildClustersRoute = defineRoute({
  method: "get",
  path: "/api/v1/image-builds/clusters",
  operationId: "listBuildClusters",
  tags: ["images"],
  summary: "Clusters marked for image builds (super_admin)",
  auth: "user",
  responses: { 200: BuildClusterList },
  handler: async ({ deps, principal }) => ({
    status: 200,
    body: { data: (await listBuildClustersFor(deps, principal)).map(presentBuildCluster) },
  }),
});

export const markBuildClusterRoute = defineRoute({
  method: "put",
  path: "/api/v1/image-builds/clusters/:clusterId",
  operationId: "markBuildCluster",
  tags: ["images"],
  summary: "Mark a registered cluster for image builds (super_admin)",
  description:
    "Build Jobs run in its BERTH_BUILD_NAMESPACE on nodes without GPUs, made by the cluster's operator from ImageBuild resources (docs/dev/images.md). Checked first: the registered credential may write ImageBuilds there and a trial one is accepted (422 `build_cluster_not_ready` with what is missing). Marking again replaces the push Secret.",
  auth: "user",
  params: ClusterIdParams,
  body: MarkBuildClusterBody,
  audit: "build_cluster.mark",
  errors: ["build_cluster_not_ready"],
  responses: { 204: z.null() },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("cluster", params.clusterId);
    await markForBuilds(deps, principal, params.clusterId, { pushSecret: body?.push_secret });
    return { status: 204, body: null };
  },
});

export const unmarkBuildClusterRoute = defineRoute({
  method: "delete",
  path: "/api/v1/image-builds/clusters/:clusterId",
  operationId: "unmarkBuildCluster",
  tags: ["images"],
  summary: "Stop using a cluster for image builds (super_admin); builds on it run to their end",
  auth: "user",
  params: ClusterIdParams,
  audit: "build_cluster.unmark",
  responses: { 204: z.null() },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("cluster", params.clusterId);
    await unmarkForBuilds(deps, principal, params.clusterId);
    return { status: 204, body: null };
  },
});

export const createBuildRoute = defineRoute({
  method: "post",
  path: "/api/v1/image-builds",
  operationId: "createImageBuild",
  tags: ["images"],
  summary: "Build a private image from a Dockerfile",
  description: [
    "Answers 202 with the build `queued` and its image (`image_id`) in state `building`, which counts among your 20 private images. The build runs as a Job on a cluster marked for builds; follow `GET /api/v1/image-builds/{id}/logs`. It succeeds only when Berth finds the manifest in its registry with the digest the build reported; the image then turns `ready`.",
    "One build in flight per member, a bounded number per organization (409 `build_limit_reached`). A request with the same Dockerfile and base image as an earlier build of yours that is in flight or whose image is still there answers 200 with that build (`reused: true`). No build cluster: 422 `no_build_cluster`. An empty or oversized Dockerfile: 400 `dockerfile_invalid`.",
  ].join("\n\n"),
  auth: "user",
  body: CreateImageBuildBody,
  idempotent: true,
  audit: "image_build.create",
  responses: { 200: ImageBuild, 202: ImageBuild },
  handler: async ({ deps, principal, body, audit }) => {
    const { build, reused } = await requestBuild(deps, principal, body);
    audit.target("image_build", build.id);
    return reused ? { status: 200, body: presentBuild(build, true) } : { status: 202, body: presentBuild(build) };
  },
});

export const listBuildsRoute = defineRoute({
  method: "get",
  path: "/api/v1/image-builds",
  operationId: "listImageBuilds",
  tags: ["images"],
  summary: "Your image builds, newest first",
  auth: "user",
  responses: { 200: ImageBuildList },
  handler: async ({ deps, principal }) => ({
    status: 200,
    body: { data: (await listMyBuilds(deps, principal)).map((b) => presentBuild(b)) },
  }),
});

export const getBuildRoute = defineRoute({
  method: "get",
  path: "/api/v1/image-builds/:id",
  operationId: "getImageBuild",
  tags: ["images"],
  summary: "One of your image builds",
  auth: "user",
  params: BuildIdParams,
  responses: { 200: ImageBuild },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentBuild(await getBuild(deps, principal, params.id)),
  }),
});

export const cancelBuildRoute = defineRoute({
  method: "post",
  path: "/api/v1/image-builds/:id/cancel",
  operationId: "cancelImageBuild",
  tags: ["images"],
  summary: "Cancel a queued or running build (its Job is deleted; its image's slot is freed)",
  auth: "user",
  params: BuildIdParams,
  audit: "image_build.cancel",
  responses: { 202: ImageBuild },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("image_build", params.id);
    return { status: 202, body: presentBuild(await cancelBuild(deps, principal, params.id)) };
  },
});

export const buildLogsRoute = defineRoute({
  method: "get",
  path: "/api/v1/image-builds/:id/logs",
  operationId: "streamImageBuildLogs",
  tags: ["images"],
  summary: "The build's log as server-sent events, live while it runs; resumes with Last-Event-ID",
  description:
    "`event: log` with `id:` (resume after it with the `Last-Event-ID` header) and `data: {text}` (one or more lines, batched as the worker stored them); `event: end` with `data: {state, failure_reason}` once the build has finished and every line was sent. The log is kept up to a size limit (BERTH_BUILD_LOG_MAX_BYTES); past it one line says so.",
  auth: "user",
  params: BuildIdParams,
  responses: { 200: z.string().meta({ description: "text/event-stream (see the description)." }) },
  handler: async ({ deps, principal, params, ctx }) => {
    await getBuild(deps, principal, params.id);
    const header = ctx.get("Last-Event-ID");
    if (header !== "" && !/^\d{1,18}$/.test(header))
      throw new Invalid("the Last-Event-ID header is not a log position", [
        { path: ["headers", "Last-Event-ID"], message: "digits", code: "invalid_event_id" },
      ]);
    return {
      kind: "sse",
      run: async (out) => {
        for await (const e of followBuildLog(deps, params.id, header === "" ? "0" : header, () => out.closed)) {
          if (e.kind === "log") out.write(`id: ${e.seq}\nevent: log\ndata: ${JSON.stringify({ text: e.text })}\n\n`);
          else if (e.kind === "heartbeat")
            out.write(`event: heartbeat\ndata: ${JSON.stringify({ at: e.at.toISOString() })}\n\n`);
          else
            out.write(
              `event: end\ndata: ${JSON.stringify({ state: e.state, failure_reason: e.failureReason, image_state: e.imageState })}\n\n`,
            );
        }
      },
    };
  },
});

export const routes: RouteDef[] = [
  listBuildClustersRoute,
  markBuildClusterRoute,
  unmarkBuildClusterRoute,
  createBuildRoute,
  listBuildsRoute,
  getBuildRoute,
  cancelBuildRoute,
  buildLogsRoute,
];
