// Sessions: the list and the queue, one session's state, usage, idle clock, Kubernetes view and logs,
// the actions on it, and the new-session wizard's cost preview and create.
import type { BodyOf, QueryOf } from "../api/client.ts";
import { api } from "./context.ts";

export type SessionAction = "pause" | "resume" | "restart" | "terminate";

export function loadSessions(query: QueryOf<"listSessions">, signal?: AbortSignal) {
  return api.call("listSessions", { query }, { signal });
}

/** Free GPUs per cluster and model, as the sessions list and the wizard show them. */
export function loadGpuAvailability(signal?: AbortSignal) {
  return api.call("getGpuAvailability", {}, { signal });
}

export function terminateSessions(ids: string[]) {
  return api.call("bulkTerminateSessions", { body: { ids } });
}

export function loadSession(sessionId: string, signal?: AbortSignal) {
  return api.call("getSession", { params: { sessionId } }, { signal });
}

export function loadSessionUsage(sessionId: string, signal?: AbortSignal) {
  return api.call("getSessionUsage", { params: { sessionId }, query: { points: 60 } }, { signal });
}

export function loadSessionIdle(sessionId: string, signal?: AbortSignal) {
  return api.call("getSessionIdle", { params: { sessionId } }, { signal });
}

export function loadSessionResource(sessionId: string, signal?: AbortSignal) {
  return api.call("getSessionResource", { params: { sessionId } }, { signal });
}

export function loadSessionResourceEvents(sessionId: string, signal?: AbortSignal) {
  return api.call("listSessionResourceEvents", { params: { sessionId } }, { signal });
}

export function loadSessionLogs(sessionId: string, tail: number) {
  return api.call("getSessionLogs", { params: { sessionId }, query: { tail } });
}

export function loadConnectLinks(sessionId: string) {
  return api.call("getSessionConnectLinks", { params: { sessionId } });
}

export async function actOnSession(sessionId: string, action: SessionAction): Promise<void> {
  const params = { params: { sessionId } };
  switch (action) {
    case "pause":
      await api.call("pauseSession", params);
      break;
    case "resume":
      await api.call("resumeSession", params);
      break;
    case "restart":
      await api.call("restartSession", params);
      break;
    case "terminate":
      await api.call("terminateSession", params);
      break;
  }
}

export function keepSessionRunning(sessionId: string) {
  return api.call("keepSessionRunning", { params: { sessionId } });
}

export function previewSessionCost(body: BodyOf<"previewSessionCost">, signal?: AbortSignal) {
  return api.call("previewSessionCost", { body }, { signal });
}

/** `idempotencyKey`: the same intent retried reuses its key (data/intent-key.ts). */
export function createSession(body: BodyOf<"createSession">, idempotencyKey: string) {
  return api.call("createSession", { body }, { idempotencyKey });
}

export function loadQueue(scope: "mine" | "all", page: number, signal?: AbortSignal) {
  return api.call("listQueue", { query: { scope, page, size: 50 } }, { signal });
}

export function cancelQueuedSession(sessionId: string) {
  return api.call("cancelQueuedSession", { params: { sessionId } });
}

export function changeQueuePriority(sessionId: string, priority: BodyOf<"changeQueuePriority">["priority"]) {
  return api.call("changeQueuePriority", { params: { sessionId }, body: { priority } });
}

/** The session's log as a stream of text, from the last `tail` lines on, until `signal` aborts. */
export function followSessionLogs(sessionId: string, tail: number, signal: AbortSignal) {
  return api.fetchRaw(`/api/v1/sessions/${encodeURIComponent(sessionId)}/logs?follow=true&tail=${tail}`, {
    signal,
    headers: { Accept: "text/plain" },
  });
}
