// The body of a Kubernetes Event about a Session: the session controller's recorder, the worker's idle and
// time-limit warnings and fair share's reclaims all post this shape, so `kubectl describe session` and the
// console read one kind of Event whoever wrote it.
import { SessionKind } from "./kinds/index.ts";

export interface SessionEventSpec {
  type: "Normal" | "Warning";
  reason: string;
  message: string;
}

interface SessionRef {
  metadata: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

/** An Event on `s` by `component` (e.g. "berth-worker"), timestamped to the second at `now`. */
export function sessionEventBody(s: SessionRef, e: SessionEventSpec, component: string, now: Date) {
  const ns = s.metadata.namespace as string;
  const at = `${now.toISOString().slice(0, 19)}Z`;
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { generateName: `${s.metadata.name}.`, namespace: ns },
    involvedObject: {
      apiVersion: SessionKind.apiVersion,
      kind: "Session",
      name: s.metadata.name,
      namespace: ns,
      uid: s.metadata.uid,
      resourceVersion: s.metadata.resourceVersion,
    },
    type: e.type,
    reason: e.reason,
    message: e.message.slice(0, 1024),
    source: { component },
    reportingComponent: `berth.dev/${component}`,
    reportingInstance: component,
    firstTimestamp: at,
    lastTimestamp: at,
    count: 1,
  };
}
