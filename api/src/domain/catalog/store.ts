// Catalog custom resources in the management cluster, through client-node's CustomObjectsApi.
// Only cluster-scoped kinds are served here (offerings, images, presets, policies).

import type { KindDefinition } from "@berth/crds";
import { ApiException, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
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

export const kubeStatus = (e: unknown): number | undefined => (e instanceof ApiException ? e.code : undefined);

/** The apiserver's own explanation in a failed call (a Status object's message). */
export function kubeMessage(e: unknown): string {
  if (e instanceof ApiException) {
    const body = typeof e.body === "string" ? safeJson(e.body) : e.body;
    if (body && typeof body === "object" && "message" in body) return String((body as { message: unknown }).message);
  }
  return e instanceof Error ? e.message : String(e);
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

const clients = new WeakMap<KubeConfig, CustomObjectsApi>();

export function catalogClient(kubeConfig: KubeConfig | undefined): CustomObjectsApi {
  if (!kubeConfig)
    throw new Unavailable("the catalog needs the management cluster, and none is configured (BERTH_KUBECONFIG)");
  let c = clients.get(kubeConfig);
  if (!c) {
    c = kubeConfig.makeApiClient(CustomObjectsApi);
    clients.set(kubeConfig, c);
  }
  return c;
}

const g = (k: KindDefinition) => ({ group: k.group, version: k.version, plural: k.plural });

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

export async function listObjects(api: CustomObjectsApi, kind: KindDefinition): Promise<KubeObject[]> {
  const list = (await call(`listing ${kind.plural}`, () => api.listClusterCustomObject(g(kind)))) as {
    items?: KubeObject[];
  };
  return (list.items ?? []).sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""));
}

export async function getObject(
  api: CustomObjectsApi,
  kind: KindDefinition,
  name: string,
): Promise<KubeObject | undefined> {
  try {
    return (await call(`reading ${kind.kind} ${name}`, () =>
      api.getClusterCustomObject({ ...g(kind), name }),
    )) as KubeObject;
  } catch (e) {
    if (kubeStatus(e) === 404) return undefined;
    throw e;
  }
}

export async function createObject(api: CustomObjectsApi, kind: KindDefinition, body: KubeObject): Promise<KubeObject> {
  return (await call(`creating ${kind.kind}`, () => api.createClusterCustomObject({ ...g(kind), body }))) as KubeObject;
}

/** Replaces with the resourceVersion read: a concurrent change makes the apiserver answer 409. */
export async function replaceObject(
  api: CustomObjectsApi,
  kind: KindDefinition,
  body: KubeObject,
): Promise<KubeObject> {
  return (await call(`replacing ${kind.kind}`, () =>
    api.replaceClusterCustomObject({ ...g(kind), name: body.metadata.name!, body }),
  )) as KubeObject;
}
