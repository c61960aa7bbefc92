// The Kubernetes clients of a process (the API's and the worker's): the management cluster's one client and
// one client per registered GPU cluster, made from its stored credential on first use and kept. The clients
// themselves are made by the composition root's `connect` (api/src/buildDeps.ts: makeClusterClients), so
// nothing below the roots opens connections of its own.
//
// Trap: a credential may change under a kept client: a Cluster pointing at another Secret is seen at once;
// a Secret rewritten in place is read again after `recheckMs` (the worker has no other way to hear of it).
// Deregistration forgets the cluster's client at once.
import type { HttpKube, HttpKubeOptions, KubeApi } from "@berth/controllers/kube";
import { type Cluster, ClusterKind, resourcePath } from "@berth/crds";
import type { ClusterCredential } from "./credential.ts";
import { readCredential } from "./store.ts";

/**
 * A client that can also stream (pods/log) and let go of its connections: at once (close), or once the
 * requests on them have been answered (closeWhenSettled: a replaced client may still be serving a caller).
 */
export type ClusterClient = KubeApi & Pick<HttpKube, "stream" | "close" | "closeWhenSettled">;

/** Makes a client of a GPU cluster's credential (the root's HttpKube, with its user agent and sockets). */
export type ConnectCluster = (cred: ClusterCredential, opts?: HttpKubeOptions) => ClusterClient;

export interface ClusterClientsOptions {
  management: ClusterClient;
  connect: ConnectCluster;
  /** A kept client's credential is read again after this long. Default 5 minutes. */
  recheckMs?: number;
  now?: () => number;
}

interface Held {
  ref: string;
  credential: string;
  client: ClusterClient;
  checkedAt: number;
}

const refKey = (r: { namespace: string; name: string; key?: string | undefined }) =>
  `${r.namespace}/${r.name}/${r.key ?? ""}`;

export class ClusterClients {
  readonly management: ClusterClient;
  readonly #connect: ConnectCluster;
  readonly #recheckMs: number;
  readonly #now: () => number;
  readonly #held = new Map<string, Held>();

  constructor(o: ClusterClientsOptions) {
    this.management = o.management;
    this.#connect = o.connect;
    this.#recheckMs = o.recheckMs ?? 300_000;
    this.#now = o.now ?? Date.now;
  }

  /**
   * A registered cluster's kept client; a changed credential makes a new one (the old one is closed once
   * the requests in flight on it have been answered).
   */
  async forCluster(cluster: Cluster): Promise<ClusterClient> {
    const id = cluster.spec.id;
    const ref = refKey(cluster.spec.credentialSecretRef);
    const held = this.#held.get(id);
    if (held && held.ref === ref && this.#now() - held.checkedAt < this.#recheckMs) return held.client;
    const credential = await readCredential(this.management, cluster.spec.credentialSecretRef);
    const seen = JSON.stringify(credential);
    // Another caller may have made it while the Secret was read.
    const current = this.#held.get(id);
    if (current && current.ref === ref && current.credential === seen) {
      current.checkedAt = this.#now();
      return current.client;
    }
    current?.client.closeWhenSettled();
    const client = this.#connect(credential);
    this.#held.set(id, { ref, credential: seen, client, checkedAt: this.#now() });
    return client;
  }

  /**
   * A cluster by its Berth id (clu_…; the worker's build clusters): a kept client is used while fresh,
   * otherwise the Cluster resources are listed to find it.
   */
  async forClusterId(id: string): Promise<ClusterClient> {
    const held = this.#held.get(id);
    if (held && this.#now() - held.checkedAt < this.#recheckMs) return held.client;
    const list = await this.management.json<{ items?: Cluster[] }>("GET", resourcePath(ClusterKind));
    const cluster = (list.items ?? []).find((c) => c.spec.id === id);
    if (!cluster) throw new Error(`no Cluster resource for ${id}`);
    return this.forCluster(cluster);
  }

  /** A credential that is not registered (yet): a client of its own, which the caller closes. */
  forCredential(cred: ClusterCredential, opts?: HttpKubeOptions): ClusterClient {
    return this.#connect(cred, opts);
  }

  /**
   * The cluster went, or its credential was replaced: its kept client is forgotten, and closed once the
   * requests in flight on it have been answered.
   */
  forget(clusterId: string): void {
    this.#held.get(clusterId)?.client.closeWhenSettled();
    this.#held.delete(clusterId);
  }

  /** Lets go of every connection (a later call opens new ones). */
  close(): void {
    for (const h of this.#held.values()) h.client.close();
    this.#held.clear();
    this.management.close();
  }
}
