// GET /api/v1/sessions/:sessionId/logs?tail=&follow=&timestamps=: the session pod's log, read through
// its cluster's Kubernetes API (pods/log) with the registered credential. Never from the pod directly.

import type { Readable } from "node:stream";
import { z } from "zod";
import type { Deps } from "../../deps.ts";
import { type ConnectPortsOf, connectDepsOf } from "../../domain/connect/adapters.ts";
import { openSessionLog, type PodLogs, registeredCredentialLogs } from "../../domain/logs/ports.ts";
import { Conflict } from "../../errors.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { SessionParams } from "../connect/schemas.ts";
import { LogsQuery, SessionLogs } from "./schemas.ts";

const LIMIT_BYTES = 1024 * 1024;

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export function logsRoutes(
  portsOf: ConnectPortsOf = connectDepsOf,
  logsOf: (deps: Deps) => PodLogs = registeredCredentialLogs,
): RouteDef[] {
  const getLogs = defineRoute({
    method: "get",
    path: "/api/v1/sessions/:sessionId/logs",
    operationId: "getSessionLogs",
    tags: ["sessions"],
    summary: "The session's log (tail, or follow as a text stream)",
    description: [
      "Read through the session's cluster's Kubernetes API (`pods/log`) with the cluster's registered credential.",
      "Without `follow`: JSON with the last `tail` lines (at most 1 MiB). With `follow=true`: `text/plain` streamed as the pod writes, starting with the last `tail` lines, until the pod ends or the client disconnects (the JSON schema below then does not apply).",
      "404 for a session the caller may not see; 409 `conflict` with `details.reason` = `no_pod_log` when the session has no pod with a log (paused, not started); 503 when the cluster does not answer.",
    ].join("\n\n"),
    auth: "user",
    params: SessionParams,
    query: LogsQuery,
    errors: ["conflict"],
    produces: {
      "application/json": SessionLogs,
      "text/plain": z.string().meta({ description: "With follow=true: the log as the pod writes it." }),
    },
    responses: { 200: SessionLogs },
    handler: async ({ deps, principal, params, query, ctx }) => {
      const session = await portsOf(deps).sessions.forUser(principal, params.sessionId);
      if (!session.clusterId || !session.podName || !session.namespace) {
        throw new Conflict(`session ${session.id} has no pod (${session.phase})`, {
          reason: "no_pod_log",
          phase: session.phase,
        });
      }
      const clusterId = session.clusterId;
      const abort = new AbortController();
      ctx.req.on("close", () => abort.abort());
      const stream = await openSessionLog(logsOf(deps), clusterId, {
        namespace: session.namespace,
        pod: session.podName,
        tailLines: query.tail,
        follow: query.follow,
        timestamps: query.timestamps,
        ...(query.follow ? {} : { limitBytes: LIMIT_BYTES }),
        signal: abort.signal,
      });
      const answer = {
        session_id: session.id,
        cluster_id: clusterId,
        pod: session.podName,
        lines: [] as string[],
        truncated: false,
      };
      if (!query.follow) {
        const text = await readAll(stream);
        answer.lines = text.split("\n");
        if (answer.lines.at(-1) === "") answer.lines.pop();
        answer.truncated = Buffer.byteLength(text) >= LIMIT_BYTES;
        return { status: 200, body: answer, headers: { "Cache-Control": "no-store" } };
      }
      // Follow: lines as the pod writes them, done when either side ends (the client's leaving aborts the
      // cluster's stream above).
      return { kind: "text", body: stream };
    },
  });
  return [getLogs];
}

export const routes: RouteDef[] = logsRoutes();
