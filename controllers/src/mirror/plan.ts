// The GPU-cluster reconciler's decision, pure: a mirror and what exists for it → what to create or
// delete, and the phase to report to the control plane. Level-based: it looks only at what is there, so
// a restarted operator (or a second replica taking over) reaches the same answer.
import type { SessionMirror, SessionMirrorPhase } from "@berth/crds";
import { LABELS, MIRROR_FINALIZER } from "../sessions/names.ts";
import {
  type KubeObjectMeta,
  type MirrorManifestOptions,
  networkPolicyManifest,
  podManifest,
  serviceManifest,
} from "./manifests.ts";

export interface PodView {
  metadata: KubeObjectMeta;
  spec?: { nodeName?: string };
  status?: {
    phase?: string;
    reason?: string;
    message?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    containerStatuses?: {
      name: string;
      ready?: boolean;
      state?: { waiting?: { reason?: string; message?: string }; terminated?: { reason?: string; exitCode?: number } };
    }[];
  };
}

export interface ObjectView {
  metadata: KubeObjectMeta;
}

export interface MirrorObserved {
  mirror: SessionMirror;
  /** For how long a pod has been terminating (a pod on a lost node never finishes without force). */
  now?: Date;
  pod?: PodView;
  service?: ObjectView;
  networkPolicy?: ObjectView;
}

/** What the operator reports for a mirror (`Terminated` is reported once the mirror itself is gone). */
export interface MirrorReport {
  phase: SessionMirrorPhase | "Terminated";
  node?: string;
  reason: string;
  message: string;
}

export type MirrorAction =
  | { kind: "createPod"; manifest: ReturnType<typeof podManifest> }
  /** `graceSeconds: 0` for a pod of a previous incarnation: the name must be free again soon. */
  | { kind: "deletePod"; name: string; uid?: string; graceSeconds?: number }
  | { kind: "createService"; manifest: ReturnType<typeof serviceManifest> }
  | { kind: "createNetworkPolicy"; manifest: ReturnType<typeof networkPolicyManifest> }
  | { kind: "deleteService"; name: string }
  | { kind: "deleteNetworkPolicy"; name: string }
  /** Removes our finalizer from a mirror being deleted: everything it made is gone. */
  | { kind: "releaseMirror"; finalizers: string[] };

export interface MirrorPlan {
  actions: MirrorAction[];
  report: MirrorReport;
  /** Look again after this long (a terminating pod that may need force). */
  requeueAfterMs?: number;
}

/** A pod still terminating this long after its deletion (its node is gone) is removed with force. */
export const FORCE_DELETE_AFTER_MS = 15_000;

/** Force-deletes a pod stuck terminating; undefined when it is not stuck (yet). */
function forceIfStuck(pod: PodView | undefined, now: Date | undefined): MirrorAction | undefined {
  const since = pod?.metadata.deletionTimestamp ? Date.parse(pod.metadata.deletionTimestamp) : Number.NaN;
  if (!pod || !now || !Number.isFinite(since) || now.getTime() - since < FORCE_DELETE_AFTER_MS) return undefined;
  return {
    kind: "deletePod",
    name: pod.metadata.name,
    ...(pod.metadata.uid ? { uid: pod.metadata.uid } : {}),
    graceSeconds: 0,
  };
}

const IMAGE_PULL_FAILURES = new Set([
  "ErrImagePull",
  "ImagePullBackOff",
  "InvalidImageName",
  "ErrImageNeverPull",
  "RegistryUnavailable",
]);
const CONFIG_FAILURES = new Set(["CreateContainerConfigError", "CreateContainerError", "RunContainerError"]);

function ownedBy(obj: ObjectView | undefined, mirror: SessionMirror): boolean {
  return obj?.metadata.ownerReferences?.some((r) => r.uid === mirror.metadata.uid) ?? false;
}

export function planMirror(observed: MirrorObserved, opts: MirrorManifestOptions): MirrorPlan {
  const { mirror, pod, service, networkPolicy } = observed;
  const actions: MirrorAction[] = [];
  const podName = mirror.metadata.name as string;

  // Being deleted (pause, terminate, re-placement): take everything down ourselves — the garbage
  // collector would too, but only once it watches the kind, which on a fresh cluster takes its discovery
  // period — and let the mirror go (our finalizer) only when the pod is gone: then its GPU is free.
  if (mirror.metadata.deletionTimestamp) {
    if (pod && !pod.metadata.deletionTimestamp)
      actions.push({ kind: "deletePod", name: podName, uid: pod.metadata.uid });
    if (service && ownedBy(service, mirror) && !service.metadata.deletionTimestamp)
      actions.push({ kind: "deleteService", name: podName });
    if (networkPolicy && ownedBy(networkPolicy, mirror) && !networkPolicy.metadata.deletionTimestamp)
      actions.push({ kind: "deleteNetworkPolicy", name: podName });
    const forced = forceIfStuck(pod, observed.now);
    if (forced) actions.push(forced);
    const finalizers = mirror.metadata.finalizers ?? [];
    if (!pod && finalizers.includes(MIRROR_FINALIZER))
      actions.push({ kind: "releaseMirror", finalizers: finalizers.filter((f) => f !== MIRROR_FINALIZER) });
    return {
      actions,
      report: { phase: "Terminating", reason: "MirrorDeleted", message: pod ? "deleting the pod" : "pod deleted" },
      ...(pod ? { requeueAfterMs: FORCE_DELETE_AFTER_MS } : {}),
    };
  }

  if (!service) actions.push({ kind: "createService", manifest: serviceManifest(mirror, opts) });
  if (!networkPolicy) actions.push({ kind: "createNetworkPolicy", manifest: networkPolicyManifest(mirror, opts) });

  if (!pod) {
    actions.push({ kind: "createPod", manifest: podManifest(mirror, opts) });
    return { actions, report: { phase: "Starting", reason: "PodPending", message: "creating the pod" } };
  }

  // A pod of an earlier mirror of the same session (the session was placed again after a node was lost):
  // it blocks the name, so it goes at once.
  if (!ownedBy(pod, mirror)) {
    if (!pod.metadata.deletionTimestamp)
      actions.push({ kind: "deletePod", name: podName, uid: pod.metadata.uid, graceSeconds: 0 });
    return {
      actions,
      report: { phase: "Starting", reason: "PodPending", message: "removing the pod of an earlier placement" },
    };
  }

  const podRestart = Number(pod.metadata.labels?.[LABELS.restart] ?? "0");
  if (podRestart < mirror.spec.restartCount) {
    if (!pod.metadata.deletionTimestamp) actions.push({ kind: "deletePod", name: podName, uid: pod.metadata.uid });
    const forced = forceIfStuck(pod, observed.now);
    if (forced) actions.push(forced);
    return {
      actions,
      report: { phase: "Restarting", reason: "RestartRequested", message: "replacing the pod" },
      requeueAfterMs: FORCE_DELETE_AFTER_MS,
    };
  }

  if (pod.metadata.deletionTimestamp) {
    // Deleted by someone else (a drain's eviction, a node going away): it is recreated once it is gone.
    const forced = forceIfStuck(pod, observed.now);
    if (forced) actions.push(forced);
    return {
      actions,
      report: { phase: "Starting", reason: "PodPending", message: "the pod is being deleted; it will be recreated" },
      requeueAfterMs: FORCE_DELETE_AFTER_MS,
    };
  }

  const node = pod.spec?.nodeName;
  const at = node ? { node } : {};
  const phase = pod.status?.phase;
  if (phase === "Failed" || phase === "Succeeded") {
    // Evicted by the kubelet (node pressure) or stopped: replace it; the scheduler finds room again.
    if (pod.status?.reason === "Evicted" || phase === "Succeeded") {
      actions.push({ kind: "deletePod", name: podName, uid: pod.metadata.uid });
      return {
        actions,
        report: {
          phase: "Starting",
          reason: "PodPending",
          message: `the pod ${pod.status?.reason === "Evicted" ? "was evicted" : "stopped"}; replacing it`,
        },
      };
    }
    return {
      actions,
      report: {
        phase: "Failed",
        ...at,
        reason: "PodFailed",
        message: pod.status?.message ?? pod.status?.reason ?? "the pod failed",
      },
    };
  }

  for (const c of pod.status?.containerStatuses ?? []) {
    const waiting = c.state?.waiting;
    if (waiting?.reason && IMAGE_PULL_FAILURES.has(waiting.reason)) {
      return {
        actions,
        report: { phase: "Failed", ...at, reason: "ImagePullFailed", message: waiting.message ?? waiting.reason },
      };
    }
    if (waiting?.reason && CONFIG_FAILURES.has(waiting.reason)) {
      return {
        actions,
        report: { phase: "Failed", ...at, reason: "PodFailed", message: waiting.message ?? waiting.reason },
      };
    }
  }

  const scheduled = pod.status?.conditions?.find((c) => c.type === "PodScheduled");
  if (!node && scheduled?.status === "False" && scheduled.reason === "Unschedulable") {
    return {
      actions,
      report: { phase: "Starting", reason: "Unschedulable", message: scheduled.message ?? "no node has room" },
    };
  }

  const ready = pod.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
  if (phase === "Running" && ready)
    return { actions, report: { phase: "Running", ...at, reason: "PodRunning", message: "" } };
  return {
    actions,
    report: {
      phase: "Starting",
      ...at,
      reason: "PodPending",
      message: node ? "the pod is starting" : "waiting for a node",
    },
  };
}
