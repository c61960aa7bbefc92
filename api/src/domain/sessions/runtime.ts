// What the sessions domain needs beyond the common Deps, made once by buildDeps (deps.sessions) when the
// process has a management cluster: a client for it (Session resources, catalog reads, Kubernetes
// Events) and a short-lived cache of catalog objects (a burst of creates reads the same three objects
// thousands of times).

import { type KubeApi, KubeError } from "@berth/controllers/kube";
import {
  type Image,
  ImageKind,
  type KindDefinition,
  LABELS,
  type Offering,
  OfferingKind,
  type Pool,
  PoolKind,
  type ResourcePolicy,
  ResourcePolicyKind,
  type ResourcePreset,
  ResourcePresetKind,
  resourcePath,
  type Volume,
  VolumeKind,
} from "@berth/crds";
import { Unavailable } from "../../errors.ts";

export { sessionPath } from "@berth/crds";

export interface SessionsRuntime {
  kube: KubeApi;
  catalog: CatalogReader;
  /** Creates the organization's namespace once (409 is fine); remembered per process. */
  ensureNamespace(namespace: string): Promise<void>;
}

/** The runtime from Deps; 503 when the process runs without a management cluster. */
export function sessionsRuntimeOf(deps: { sessions?: SessionsRuntime | undefined }): SessionsRuntime {
  if (!deps.sessions)
    throw new Unavailable("sessions need the management cluster, and none is configured (BERTH_KUBECONFIG)");
  return deps.sessions;
}

export function makeSessionsRuntime(kube: KubeApi): SessionsRuntime {
  const namespaces = new Map<string, Promise<void>>();
  return {
    kube,
    catalog: new CatalogReader(kube),
    ensureNamespace(namespace) {
      let p = namespaces.get(namespace);
      if (!p) {
        p = (async () => {
          const res = await kube.request("POST", "/api/v1/namespaces", {
            body: {
              apiVersion: "v1",
              kind: "Namespace",
              metadata: {
                name: namespace,
                labels: { [LABELS.partOf]: "berth", [LABELS.role]: "organization" },
              },
            },
          });
          if (res.status !== 201 && res.status !== 409)
            throw new KubeError("POST", "/api/v1/namespaces", res.status, res.body);
        })();
        namespaces.set(namespace, p);
        p.catch(() => namespaces.delete(namespace));
      }
      return p;
    },
  };
}

/** Catalog objects by name, cached for a few seconds (an administrator's edit shows within that). */
export class CatalogReader {
  readonly #kube: KubeApi;
  readonly #ttlMs: number;
  readonly #cache = new Map<string, { at: number; value: Promise<unknown> }>();

  constructor(kube: KubeApi, ttlMs = 5_000) {
    this.#kube = kube;
    this.#ttlMs = ttlMs;
  }

  #get<T>(kind: KindDefinition, name: string, namespace?: string): Promise<T | undefined> {
    const key = `${kind.plural}/${namespace ?? ""}/${name}`;
    const hit = this.#cache.get(key);
    if (hit && Date.now() - hit.at < this.#ttlMs) return hit.value as Promise<T | undefined>;
    const path = resourcePath(kind, { ...(namespace ? { namespace } : {}), name });
    const value = (async () => {
      const res = await this.#kube.request<T>("GET", path).catch((e: unknown) => {
        throw new Unavailable("the management cluster did not answer", { reason: (e as Error).message });
      });
      if (res.status === 404) return undefined;
      if (res.status >= 300) throw new Unavailable(`reading ${kind.kind} ${name} failed (${res.status})`);
      return kind.schema.parse(res.body) as T;
    })();
    this.#cache.set(key, { at: Date.now(), value });
    value.catch(() => this.#cache.delete(key));
    return value;
  }

  offering(name: string): Promise<Offering | undefined> {
    return this.#get<Offering>(OfferingKind as unknown as KindDefinition, name);
  }
  preset(name: string): Promise<ResourcePreset | undefined> {
    return this.#get<ResourcePreset>(ResourcePresetKind as unknown as KindDefinition, name);
  }
  image(name: string): Promise<Image | undefined> {
    return this.#get<Image>(ImageKind as unknown as KindDefinition, name);
  }
  pool(name: string): Promise<Pool | undefined> {
    return this.#get<Pool>(PoolKind as unknown as KindDefinition, name);
  }

  /** Read fresh, never from the cache: its lock and the cluster holding its claim change at any time. */
  volume(namespace: string, name: string): Promise<Volume | undefined> {
    this.#cache.delete(`${VolumeKind.plural}/${namespace}/${name}`);
    return this.#get<Volume>(VolumeKind as unknown as KindDefinition, name, namespace);
  }

  /** Every ResourcePolicy (few: global, some organizations and projects), cached like the rest. */
  policies(): Promise<ResourcePolicy[]> {
    const key = "resourcepolicies/*";
    const hit = this.#cache.get(key);
    if (hit && Date.now() - hit.at < this.#ttlMs) return hit.value as Promise<ResourcePolicy[]>;
    const k = ResourcePolicyKind;
    const value = (async () => {
      const list = await this.#kube.json<{ items: unknown[] }>("GET", resourcePath(k)).catch((e: unknown) => {
        throw new Unavailable("the management cluster did not answer", { reason: (e as Error).message });
      });
      return list.items.flatMap((i) => {
        const r = k.schema.safeParse(i);
        return r.success ? [r.data] : [];
      });
    })();
    this.#cache.set(key, { at: Date.now(), value });
    value.catch(() => this.#cache.delete(key));
    return value;
  }
}
