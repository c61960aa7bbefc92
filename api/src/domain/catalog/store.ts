// Catalog custom resources in the management cluster, through the one Kubernetes client.
// Only cluster-scoped kinds are served here (offerings, images, presets, policies).

import { type KubeApi, KubeError } from "@berth/controllers/kube";
import { type KindDefinition, resourcePath } from "@berth/crds";
import { Unavailable } from "../../errors.ts";

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name?: string;
    resourceVersion?: string;
    creationTimestamp?: string;
    labels?: Record<string, string>;
    [k: string]: unknown;
  };
  spec: Record<string, unknown>;
  status?: unknown;
}

export const kubeStatus = (e: unknown): number | undefined => (e instanceof KubeError ? e.status : undefined);

/** The apiserver's own explanation in a failed call (a Status object's message). */
export function kubeMessage(e: unknown): string {
  if (e instanceof KubeError && e.statusMessage !== undefined) return e.statusMessage;
  return e instanceof Error ? e.message : String(e);
}

/** The management cluster's client (Deps.kube), or 503 when none is configured. */
export function catalogClient(kube: KubeApi | undefined): KubeApi {
  if (!kube)
    throw new Unavailable("the catalog needs the management cluster, and none is configured (BERTH_KUBECONFIG)");
  return kube;
}

const path = (k: KindDefinition, name?: string) => resourcePath(k, name === undefined ? {} : { name });

/** Network failures and 5xx from the management cluster are 503 for our callers, not 500. */
async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const code = kubeStatus(e);
    if (code === undefined || code >= 500)
      throw new Unavailable(`the management cluster did not answer ${what}`, { reason: kubeMessage(e) });
    throw e;
  }
}

export async function listObjects(api: KubeApi, kind: KindDefinition): Promise<KubeObject[]> {
  const list = await call(`listing ${kind.plural}`, () => api.json<{ items?: KubeObject[] }>("GET", path(kind)));
  return (list.items ?? []).sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""));
}

export async function getObject(api: KubeApi, kind: KindDefinition, name: string): Promise<KubeObject | undefined> {
  try {
    return await call(`reading ${kind.kind} ${name}`, () => api.json<KubeObject>("GET", path(kind, name)));
  } catch (e) {
    if (kubeStatus(e) === 404) return undefined;
    throw e;
  }
}

export async function createObject(api: KubeApi, kind: KindDefinition, body: KubeObject): Promise<KubeObject> {
  return call(`creating ${kind.kind}`, () => api.json<KubeObject>("POST", path(kind), { body }));
}

/** Replaces with the resourceVersion read: a concurrent change makes the apiserver answer 409. */
export async function replaceObject(api: KubeApi, kind: KindDefinition, body: KubeObject): Promise<KubeObject> {
  return call(`replacing ${kind.kind}`, () =>
    api.json<KubeObject>("PUT", path(kind, body.metadata.name as string), { body }),
  );
}
