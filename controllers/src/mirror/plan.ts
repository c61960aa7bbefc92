// The GPU-cluster reconciler's decision, pure: a mirror and what exists for it → what to create or
// delete, and the phase to report to the control plane. Level-based: it looks only at what is there, so
// a restarted operator (or a second replica taking over) reaches the same answer.
import type { SessionMirror, SessionMirrorPhase } from "@berth/crds";
import { LABELS, MIRROR_FINALIZER } from "@berth/crds";
import {
  claimManifest,
  type KubeObjectMeta,
  type MirrorManifestOptions,
  podManifest,
  readinessInWords,
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
      state?: {
        waiting?: { reason?: string; message?: string };
        running?: { startedAt?: string };
        terminated?: { reason?: string; exitCode?: number };
      };
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
  /**
   * A per-session NetworkPolicy of an earlier operator version: removed, since the namespace's one
   * (policy-plan.ts `planSessionsPolicy`) admits the same and nothing more.
   */
  networkPolicy?: ObjectView;
  /**
   * A pod this operator created (or found already there, a 409) that its watch has not shown yet; `pod`
   * is then absent. Another create would only get 409, and a deleted mirror must not be let go while its
   * pod may exist. `expiresInMs`: how long the record is still trusted (then it is looked at again).
   */
  unseenPod?: { expiresInMs: number };
  /**
   * The pod's node is no longer in the cluster (deleted, lost): no kubelet will ever finish the pod, so a
   * deletion is forced at once instead of after its grace period (it blocked the session's name ~45 s).
   */
  podNodeGone?: boolean;
  /**
   * The claims of the mirror's volumes that the operator makes itself (those with a storage class), by
   * claim name: absent from the record when the claim does not exist.
   */
  claims?: Record<string, ClaimView>;
}

export interface ClaimView {
  metadata: KubeObjectMeta;
  status?: { phase?: string };
}

/** A claim not bound after this long fails the session (ClaimNotBound): a clear reason, not a hang. */
export const CLAIM_BIND_TIMEOUT_MS = 5 * 60_000;
/** How long a started session app may take to answer its readiness probe before the session fails. */
export const APP_READY_TIMEOUT_MS = 10 * 60_000;

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
  | { kind: "createClaim"; manifest: ReturnType<typeof claimManifest> }
  | { kind: "deleteNetworkPolicy"; name: string }
  /** Removes our finalizer from a mirror being deleted: everything it made is gone. */
  | { kind: "releaseMirror"; finalizers: string[] };

export interface MirrorPlan {
  actions: MirrorAction[];
  report: MirrorReport;
  /** Look again after this long (a terminating pod that may need force). */
  requeueAfterMs?: number;
}

/**
 * A pod still terminating this long after its deletionTimestamp is removed with force. For a pod that
 * timestamp is the end of its grace period (the request plus 30 s by default), not the request.
 */
export const FORCE_DELETE_AFTER_MS = 15_000;

/** Force-deletes a pod stuck terminating, or terminating on a node that is gone; undefined when not (yet). */
function forceIfStuck(observed: MirrorObserved): MirrorAction | undefined {
  const { pod, now } = observed;
  const since = pod?.metadata.deletionTimestamp ? Date.parse(pod.metadata.deletionTimestamp) : Number.NaN;
  if (!pod || !Number.isFinite(since)) return undefined;
  if (!observed.podNodeGone && (!now || now.getTime() - since < FORCE_DELETE_AFTER_MS)) return undefined;
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
  const { mirror, pod, networkPolicy, unseenPod } = observed;
  const actions: MirrorAction[] = [];
  const podName = mirror.metadata.name as string;
  // Graceful, unless no kubelet is left to finish it.
  const deletePod = (p: PodView): MirrorAction => ({
    kind: "deletePod",
    name: podName,
    uid: p.metadata.uid,
    ...(observed.podNodeGone ? { graceSeconds: 0 } : {}),
  });

  // Being deleted (pause, terminate, re-placement): take everything down ourselves — the garbage
  // collector would too, but only once it watches the kind, which on a fresh cluster takes its discovery
  // period — and let the mirror go (our finalizer) only when the pod is gone: then its GPU is free.
  if (mirror.metadata.deletionTimestamp) {
    if (pod && !pod.metadata.deletionTimestamp) actions.push(deletePod(pod));
    if (networkPolicy && ownedBy(networkPolicy, mirror) && !networkPolicy.metadata.deletionTimestamp)
      actions.push({ kind: "deleteNetworkPolicy", name: podName });
    const forced = forceIfStuck(observed);
    if (forced) actions.push(forced);
    const finalizers = mirror.metadata.finalizers ?? [];
    // A pod created a moment ago that the watch has not shown yet may well exist: wait for the watch
    // (or for the record to expire) before saying the GPU is free.
    if (!pod && !unseenPod && finalizers.includes(MIRROR_FINALIZER))
      actions.push({ kind: "releaseMirror", finalizers: finalizers.filter((f) => f !== MIRROR_FINALIZER) });
    return {
      actions,
      report: {
        phase: "Terminating",
        reason: "MirrorDeleted",
        message: pod || unseenPod ? "deleting the pod" : "pod deleted",
      },
      ...(pod ? { requeueAfterMs: FORCE_DELETE_AFTER_MS } : unseenPod ? { requeueAfterMs: unseenPod.expiresInMs } : {}),
    };
  }

  // Earlier versions made a policy per session; the namespace's policy (created before any pod) covers it.
  if (networkPolicy && ownedBy(networkPolicy, mirror) && !networkPolicy.metadata.deletionTimestamp)
    actions.push({ kind: "deleteNetworkPolicy", name: podName });

  if (!pod && !unseenPod) {
    // The pod waits for its volumes' claims: made here when absent, and bound (by the cluster's binder).
    const made = mirror.spec.volumes.filter((v) => v.storageClass !== undefined);
    const missing = made.filter((v) => !observed.claims?.[v.claimName]);
    for (const v of missing) actions.push({ kind: "createClaim", manifest: claimManifest(v, opts) });
    const unbound = made.filter((v) => {
      const c = observed.claims?.[v.claimName];
      return c && c.status?.phase !== "Bound";
    });
    if (missing.length > 0 || unbound.length > 0) {
      const timeout = opts.claimBindTimeoutMs ?? CLAIM_BIND_TIMEOUT_MS;
      const stuck = unbound.find((v) => {
        const since = Date.parse(observed.claims?.[v.claimName]?.metadata.creationTimestamp ?? "");
        return observed.now && Number.isFinite(since) && observed.now.getTime() - since >= timeout;
      });
      if (stuck)
        return {
          actions,
          report: {
            phase: "Failed",
            reason: "ClaimNotBound",
            message: `the claim ${stuck.claimName} of volume ${stuck.volumeId ?? stuck.claimName} did not bind within ${Math.round(timeout / 1000)} s (storage class ${stuck.storageClass}; is its provisioner running?)`,
          },
        };
      const names = [...missing, ...unbound].map((v) => v.claimName).join(", ");
      return {
        actions,
        report: {
          phase: "Starting",
          reason: "WaitingForClaim",
          message: `waiting for the claim${missing.length + unbound.length > 1 ? "s" : ""} ${names} to bind`,
        },
        // Claims are not watched: look again soon while a bind is likely (a provisioner answers within
        // seconds), then less often.
        requeueAfterMs: unbound.every((v) => {
          const since = Date.parse(observed.claims?.[v.claimName]?.metadata.creationTimestamp ?? "");
          return !observed.now || !Number.isFinite(since) || observed.now.getTime() - since < 5_000;
        })
          ? 200
          : 2_000,
      };
    }
  }

  if (!pod) {
    if (unseenPod)
      return {
        actions,
        report: { phase: "Starting", reason: "PodPending", message: "creating the pod" },
        requeueAfterMs: unseenPod.expiresInMs,
      };
    actions.push({ kind: "createPod", manifest: podManifest(mirror, opts) });
    return { actions, report: { phase: "Starting", reason: "PodPending", message: "creating the pod" } };
  }

  // A pod of an earlier mirror of the same session (the session was placed again after a node was lost):
  // it blocks the name, so it goes at once.
  if (!ownedBy(pod, mirror)) {
    // Already going (a drain's eviction gave it a grace period): forced once stuck, and looked at again
    // then, since its going is the only event that would wake this mirror.
    const forced = pod.metadata.deletionTimestamp
      ? forceIfStuck(observed)
      : { kind: "deletePod" as const, name: podName, uid: pod.metadata.uid, graceSeconds: 0 };
    if (forced) actions.push(forced);
    return {
      actions,
      report: { phase: "Starting", reason: "PodPending", message: "removing the pod of an earlier placement" },
      ...(pod.metadata.deletionTimestamp ? { requeueAfterMs: FORCE_DELETE_AFTER_MS } : {}),
    };
  }

  const podRestart = Number(pod.metadata.labels?.[LABELS.restart] ?? "0");
  if (podRestart < mirror.spec.restartCount) {
    if (!pod.metadata.deletionTimestamp) actions.push(deletePod(pod));
    const forced = forceIfStuck(observed);
    if (forced) actions.push(forced);
    return {
      actions,
      report: { phase: "Restarting", reason: "RestartRequested", message: "replacing the pod" },
      requeueAfterMs: FORCE_DELETE_AFTER_MS,
    };
  }

  if (pod.metadata.deletionTimestamp) {
    // Deleted by someone else (a drain's eviction, a node going away): it is recreated once it is gone.
    const forced = forceIfStuck(observed);
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
  // Started but not answering its readiness probe: it fails once it has had its time, not never.
  const startedAt = Date.parse(pod.status?.containerStatuses?.[0]?.state?.running?.startedAt ?? "");
  if (phase === "Running" && observed.now && Number.isFinite(startedAt)) {
    const timeout = opts.appReadyTimeoutMs ?? APP_READY_TIMEOUT_MS;
    const left = startedAt + timeout - observed.now.getTime();
    if (left <= 0)
      return {
        actions,
        report: {
          phase: "Failed",
          ...at,
          reason: "PodFailed",
          message: `the application did not answer its readiness probe (${readinessInWords(mirror.spec.imageKind, `/proxy/${podName}/`)}) within ${Math.round(timeout / 1000)} s of starting`,
        },
      };
    return {
      actions,
      report: { phase: "Starting", ...at, reason: "PodPending", message: "the application is starting" },
      requeueAfterMs: left,
    };
  }
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
