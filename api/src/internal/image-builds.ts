// POST /internal/v1/image-builds/status and /logs: a build cluster's operator reports the Jobs it runs
// from ImageBuild resources and sends their log lines (domain/images/buildReports.ts).
import { BuildLogBatch, BuildStatusReport } from "@berth/crds/internal-plane";
import { recordBuildLogs, recordBuildStatus } from "../domain/images/buildReports.ts";
import { type AnyInternalRoute, defineInternalRoute } from "./route.ts";

export const postBuildStatus = defineInternalRoute({
  method: "post",
  path: "/internal/v1/image-builds/status",
  auth: "operator",
  body: BuildStatusReport,
  handler: async ({ deps, operator, body }) => {
    return { status: 200, body: await recordBuildStatus(deps, operator.clusterId, body.reports) };
  },
});

export const postBuildLogs = defineInternalRoute({
  method: "post",
  path: "/internal/v1/image-builds/logs",
  auth: "operator",
  body: BuildLogBatch,
  handler: async ({ deps, operator, body }) => {
    return { status: 200, body: await recordBuildLogs(deps, operator.clusterId, body.build, body.lines) };
  },
});

export const internalRoutes: AnyInternalRoute[] = [postBuildStatus, postBuildLogs];
