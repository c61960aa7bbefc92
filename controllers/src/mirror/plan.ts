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

/** The pod's node for the report, when it has one. */
function at(pod: PodView): { node?: string } {
  const node = pod.spec?.nodeName;
  return node ? { node } : {};
}

const starting = (message: string): MirrorReport => ({ phase: "Starting", reason: "PodPending", message });

/**
 * A mirror being deleted is taken down; any other gets the first live decision that applies, with an
 * earlier version's per-session policy removed ahead of whatever that decision does.
 */
export function planMirror(observed: MirrorObserved, opts: MirrorManifestOptions): MirrorPlan {
  if (observed.mirror.metadata.deletionTimestamp) return planTakedown(observed);
  const plan = planLive(observed, opts);
  const legacy = legacyPolicyDeletion(observed);
  return legacy ? { ...plan, actions: [legacy, ...plan.actions] } : plan;
}

/** A mirror that is not being deleted: the first decision that applies, in the order a pod lives. */
function planLive(observed: MirrorObserved, opts: MirrorManifestOptions): MirrorPlan {
  const { pod } = observed;
  if (!pod) return (observed.unseenPod ? undefined : planClaims(observed, opts)) ?? planPodCreation(observed, opts);
  return (
    planForeignPod(observed, pod) ??
    planRestart(observed, pod) ??
    planPodGoing(observed, pod) ??
    planPodEnded(observed, pod) ??
    planContainerFailure(pod) ??
    planUnschedulable(pod) ??
    planReadiness(observed, pod, opts)
  );
}

/** Graceful, unless no kubelet is left to finish it. */
function deletePod(observed: MirrorObserved, pod: PodView): MirrorAction {
  return {
    kind: "deletePod",
    name: observed.mirror.metadata.name as string,
    uid: pod.metadata.uid,
    ...(observed.podNodeGone ? { graceSeconds: 0 } : {}),
  };
}

/** Earlier versions made a policy per session; the namespace's policy (created before any pod) covers it. */
function legacyPolicyDeletion({ mirror, networkPolicy }: MirrorObserved): MirrorAction | undefined {
  if (!networkPolicy || !ownedBy(networkPolicy, mirror) || networkPolicy.metadata.deletionTimestamp) return undefined;
  return { kind: "deleteNetworkPolicy", name: mirror.metadata.name as string };
}

/**
 * Being deleted (pause, terminate, re-placement): take everything down ourselves — the garbage collector
 * would too, but only once it watches the kind, which on a fresh cluster takes its discovery period — and
 * let the mirror go (our finalizer) only when the pod is gone: then its GPU is free.
 */
function planTakedown(observed: MirrorObserved): MirrorPlan {
  const { mirror, pod, unseenPod } = observed;
  const actions: MirrorAction[] = [];
  if (pod && !pod.metadata.deletionTimestamp) actions.push(deletePod(observed, pod));
  const legacy = legacyPolicyDeletion(observed);
  if (legacy) actions.push(legacy);
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

/** How long ago a claim was made, in ms; undefined when unknown (no clock, no timestamp). */
function claimAgeMs(observed: MirrorObserved, claimName: string): number | undefined {
  const since = Date.parse(observed.claims?.[claimName]?.metadata.creationTimestamp ?? "");
  return observed.now && Number.isFinite(since) ? observed.now.getTime() - since : undefined;
}

/**
 * The pod waits for its volumes' claims: made here when absent, and bound (by the cluster's binder).
 * Undefined once every claim is bound (or there is none): the pod may be made.
 */
function planClaims(observed: MirrorObserved, opts: MirrorManifestOptions): MirrorPlan | undefined {
  const made = observed.mirror.spec.volumes.filter((v) => v.storageClass !== undefined);
  const missing = made.filter((v) => !observed.claims?.[v.claimName]);
  const unbound = made.filter((v) => {
    const c = observed.claims?.[v.claimName];
    return c && c.status?.phase !== "Bound";
  });
  if (missing.length === 0 && unbound.length === 0) return undefined;
  const actions: MirrorAction[] = missing.map((v) => ({ kind: "createClaim", manifest: claimManifest(v, opts) }));
  const timeout = opts.claimBindTimeoutMs ?? CLAIM_BIND_TIMEOUT_MS;
  const stuck = unbound.find((v) => {
    const age = claimAgeMs(observed, v.claimName);
    return age !== undefined && age >= timeout;
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
      const age = claimAgeMs(observed, v.claimName);
      return age === undefined || age < 5_000;
    })
      ? 200
      : 2_000,
  };
}

/** No pod seen: make it, unless one made a moment ago has not shown in the watch yet (a create would get 409). */
function planPodCreation(observed: MirrorObserved, opts: MirrorManifestOptions): MirrorPlan {
  const report = starting("creating the pod");
  if (observed.unseenPod) return { actions: [], report, requeueAfterMs: observed.unseenPod.expiresInMs };
  return { actions: [{ kind: "createPod", manifest: podManifest(observed.mirror, opts) }], report };
}

/**
 * A pod of an earlier mirror of the same session (the session was placed again after a node was lost):
 * it blocks the name, so it goes at once.
 */
function planForeignPod(observed: MirrorObserved, pod: PodView): MirrorPlan | undefined {
  if (ownedBy(pod, observed.mirror)) return undefined;
  // Already going (a drain's eviction gave it a grace period): forced once stuck, and looked at again
  // then, since its going is the only event that would wake this mirror.
  const forced = pod.metadata.deletionTimestamp
    ? forceIfStuck(observed)
    : {
        kind: "deletePod" as const,
        name: observed.mirror.metadata.name as string,
        uid: pod.metadata.uid,
        graceSeconds: 0,
      };
  return {
    actions: forced ? [forced] : [],
    report: starting("removing the pod of an earlier placement"),
    ...(pod.metadata.deletionTimestamp ? { requeueAfterMs: FORCE_DELETE_AFTER_MS } : {}),
  };
}

/** A restart was asked for (the mirror's count is ahead of the pod's label): the pod is replaced. */
function planRestart(observed: MirrorObserved, pod: PodView): MirrorPlan | undefined {
  const podRestart = Number(pod.metadata.labels?.[LABELS.restart] ?? "0");
  if (podRestart >= observed.mirror.spec.restartCount) return undefined;
  const actions: MirrorAction[] = [];
  if (!pod.metadata.deletionTimestamp) actions.push(deletePod(observed, pod));
  const forced = forceIfStuck(observed);
  if (forced) actions.push(forced);
  return {
    actions,
    report: { phase: "Restarting", reason: "RestartRequested", message: "replacing the pod" },
    requeueAfterMs: FORCE_DELETE_AFTER_MS,
  };
}

/** Deleted by someone else (a drain's eviction, a node going away): it is recreated once it is gone. */
function planPodGoing(observed: MirrorObserved, pod: PodView): MirrorPlan | undefined {
  if (!pod.metadata.deletionTimestamp) return undefined;
  const forced = forceIfStuck(observed);
  return {
    actions: forced ? [forced] : [],
    report: starting("the pod is being deleted; it will be recreated"),
    requeueAfterMs: FORCE_DELETE_AFTER_MS,
  };
}

/** A pod that ended: evicted by the kubelet (node pressure) or stopped is replaced; one that failed fails. */
function planPodEnded(observed: MirrorObserved, pod: PodView): MirrorPlan | undefined {
  const phase = pod.status?.phase;
  if (phase !== "Failed" && phase !== "Succeeded") return undefined;
  const evicted = pod.status?.reason === "Evicted";
  // The scheduler finds room again for the replacement.
  if (evicted || phase === "Succeeded")
    return {
      actions: [{ kind: "deletePod", name: observed.mirror.metadata.name as string, uid: pod.metadata.uid }],
      report: starting(`the pod ${evicted ? "was evicted" : "stopped"}; replacing it`),
    };
  return {
    actions: [],
    report: {
      phase: "Failed",
      ...at(pod),
      reason: "PodFailed",
      message: pod.status?.message ?? pod.status?.reason ?? "the pod failed",
    },
  };
}

/** A container that cannot start (its image, its configuration) fails the session instead of waiting on. */
function planContainerFailure(pod: PodView): MirrorPlan | undefined {
  for (const c of pod.status?.containerStatuses ?? []) {
    const waiting = c.state?.waiting;
    if (!waiting?.reason) continue;
    const reason = IMAGE_PULL_FAILURES.has(waiting.reason)
      ? "ImagePullFailed"
      : CONFIG_FAILURES.has(waiting.reason)
        ? "PodFailed"
        : undefined;
    if (reason)
      return {
        actions: [],
        report: { phase: "Failed", ...at(pod), reason, message: waiting.message ?? waiting.reason },
      };
  }
  return undefined;
}

/** The scheduler found no node: said with its own words (which resource is short). */
function planUnschedulable(pod: PodView): MirrorPlan | undefined {
  const scheduled = pod.status?.conditions?.find((c) => c.type === "PodScheduled");
  if (pod.spec?.nodeName || scheduled?.status !== "False" || scheduled.reason !== "Unschedulable") return undefined;
  return {
    actions: [],
    report: { phase: "Starting", reason: "Unschedulable", message: scheduled.message ?? "no node has room" },
  };
}

/** Running once ready; a started app that never answers its readiness probe fails once it has had its time. */
function planReadiness(observed: MirrorObserved, pod: PodView, opts: MirrorManifestOptions): MirrorPlan {
  const phase = pod.status?.phase;
  const ready = pod.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
  if (phase === "Running" && ready)
    return { actions: [], report: { phase: "Running", ...at(pod), reason: "PodRunning", message: "" } };
  const startedAt = Date.parse(pod.status?.containerStatuses?.[0]?.state?.running?.startedAt ?? "");
  if (phase === "Running" && observed.now && Number.isFinite(startedAt)) {
    const timeout = opts.appReadyTimeoutMs ?? APP_READY_TIMEOUT_MS;
    const left = startedAt + timeout - observed.now.getTime();
    const podName = observed.mirror.metadata.name as string;
    if (left <= 0)
      return {
        actions: [],
        report: {
          phase: "Failed",
          ...at(pod),
          reason: "PodFailed",
          message: `the application did not answer its readiness probe (${readinessInWords(observed.mirror.spec.imageKind, `/proxy/${podName}/`)}) within ${Math.round(timeout / 1000)} s of starting`,
        },
      };
    return {
      actions: [],
      report: { phase: "Starting", ...at(pod), reason: "PodPending", message: "the application is starting" },
      requeueAfterMs: left,
    };
  }
  return {
    actions: [],
    report: {
      phase: "Starting",
      ...at(pod),
      reason: "PodPending",
      message: pod.spec?.nodeName ? "the pod is starting" : "waiting for a node",
    },
  };
}
