// The mirror controller's options, its counts and the report it sends (mirror/controller.ts).
import { DEFAULT_SESSIONS_NAMESPACE } from "@berth/crds";
import type { MirrorManifestOptions } from "./manifests.ts";

export interface WireStatusReport {
  session: string;
  phase: string;
  node?: string | null;
  gpu_devices?: unknown[] | null;
  reason: string;
  message: string;
  observed_generation: number;
  at: string;
}

export interface MirrorControllerOptions {
  namespace: string;
  gatewayNamespace?: string;
  gatewayPodLabels?: Record<string, string>;
  runtimeClassName?: string;
  /** CIDRs session pods may reach inside the private ranges (manifests.ts, the sessions' policy). */
  egressAllow?: readonly string[];
  /** A started session app not Ready after this long fails the session (plan.ts; default 10 min). */
  appReadyTimeoutMs?: number;
  concurrency: number;
  resyncMs: number;
  reportDebounceMs: number;
  reportBatch: number;
  /** Also write the mirror's status (phase, pod, node) on a change of phase, for `kubectl get sesm`. */
  writeStatus: boolean;
  /** Length of a usage interval (mirror/usage.ts); a whole number of seconds. */
  usageIntervalMs: number;
  /** A closed usage interval is sent this long after its end. */
  usageGraceMs: number;
  /**
   * How long, at most, a create this controller made (a pod) is trusted while its watch has not
   * shown the object (nor gone past it): a reconcile in that window does not create it again
   * (mirror/unseen.ts). Long, since a loaded operator's watch can run seconds behind.
   */
  unseenCreateMs: number;
}

export const DEFAULT_MIRROR_OPTIONS: MirrorControllerOptions = {
  namespace: DEFAULT_SESSIONS_NAMESPACE,
  concurrency: 32,
  resyncMs: 20_000,
  reportDebounceMs: 50,
  reportBatch: 1000,
  writeStatus: false,
  usageIntervalMs: 60_000,
  usageGraceMs: 2_000,
  unseenCreateMs: 30_000,
};

export interface MirrorCounts {
  podCreates: number;
  podDeletes: number;
  /** Writes of the namespace's NetworkPolicy (created, or put back after someone changed it). */
  policyWrites: number;
  /** Creates answered 409 (the object was there): each one a request the apiserver served for nothing. */
  conflictingCreates: number;
  reports: number;
  batches: number;
  failedBatches: number;
  statusWrites: number;
}

export const noMirrorWrites = (): MirrorCounts => ({
  podCreates: 0,
  podDeletes: 0,
  policyWrites: 0,
  conflictingCreates: 0,
  reports: 0,
  batches: 0,
  failedBatches: 0,
  statusWrites: 0,
});

/** What the session pods' manifests and the namespace's policy are made from. */
export function manifestOptionsOf(o: MirrorControllerOptions): MirrorManifestOptions {
  return {
    namespace: o.namespace,
    ...(o.gatewayNamespace ? { gatewayNamespace: o.gatewayNamespace } : {}),
    ...(o.gatewayPodLabels ? { gatewayPodLabels: o.gatewayPodLabels } : {}),
    ...(o.runtimeClassName ? { runtimeClassName: o.runtimeClassName } : {}),
    ...(o.egressAllow?.length ? { egressAllow: o.egressAllow } : {}),
    ...(o.appReadyTimeoutMs !== undefined ? { appReadyTimeoutMs: o.appReadyTimeoutMs } : {}),
  };
}
