// What the storage domain needs beyond the common Deps, made once by buildDeps (deps.storage) when the
// process has a management cluster: its client (Pool and Volume resources, Sessions that mount them) and
// the resource policies (quotas), read through the sessions' catalog cache.

import type { KubeApi } from "@berth/controllers/kube";
import { PoolKind, type ResourcePolicy, resourcePath, SessionKind, VolumeKind } from "@berth/crds";
import { Unavailable } from "../../errors.ts";

export interface StorageRuntime {
  kube: KubeApi;
  policies(): Promise<ResourcePolicy[]>;
  ensureNamespace(namespace: string): Promise<void>;
}

/** The runtime from Deps; 503 when the process runs without a management cluster. */
export function storageRuntimeOf(deps: { storage?: StorageRuntime | undefined }): StorageRuntime {
  if (!deps.storage)
    throw new Unavailable("storage needs the management cluster, and none is configured (BERTH_KUBECONFIG)");
  return deps.storage;
}

export const POOLS_PATH = resourcePath(PoolKind);

export function poolPath(name?: string): string {
  return resourcePath(PoolKind, name ? { name } : {});
}

export function volumePath(namespace: string, name?: string): string {
  return resourcePath(VolumeKind, { namespace, ...(name ? { name } : {}) });
}

export function namespacedSessionsPath(namespace: string): string {
  return resourcePath(SessionKind, { namespace });
}

/** A management-cluster call that failed to answer: 503, with what was being done. */
export function unreachable(what: string) {
  return (e: unknown): never => {
    throw new Unavailable(`the management cluster did not answer (${what})`, { reason: (e as Error).message });
  };
}

/** Storage shares the sessions' client, catalog cache (policies) and namespace creation. */
export function makeStorageRuntime(sessions: {
  kube: KubeApi;
  catalog: { policies(): Promise<ResourcePolicy[]> };
  ensureNamespace(namespace: string): Promise<void>;
}): StorageRuntime {
  return {
    kube: sessions.kube,
    policies: () => sessions.catalog.policies(),
    ensureNamespace: (ns) => sessions.ensureNamespace(ns),
  };
}

/**
 * A request that waits out the apiserver's 429 "storage is (re)initializing" (a kind's watch cache fills
 * on its first read after a start or a CRD change) for up to `patienceMs`; any other answer is returned.
 */
export async function requestPatiently<T>(
  kube: KubeApi,
  method: string,
  path: string,
  opts: Parameters<KubeApi["request"]>[2] = {},
  patienceMs = 5_000,
): Promise<{ status: number; body: T }> {
  const deadline = Date.now() + patienceMs;
  for (;;) {
    const res = await kube.request<T>(method, path, opts);
    if (res.status !== 429 || Date.now() > deadline) return res;
    await new Promise((r) => setTimeout(r, 200));
  }
}
