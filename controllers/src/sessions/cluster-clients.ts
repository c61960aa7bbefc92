// Clients for the registered GPU clusters, one per cluster, made from its stored credential on first use
// and kept (dispatch.ts writes mirrors with them, claims-pass.ts releases claims and purges volumes).
import type { Cluster } from "@berth/crds";
import type { KubeApi } from "../kube/client.ts";
import type { Observed } from "./observed.ts";

export interface GpuClusterClientsDeps {
  observed: Pick<Observed, "clusterResource">;
  /** A client for a registered GPU cluster, from its stored credential. */
  clusterClient(cluster: Cluster): Promise<KubeApi>;
}

export class GpuClusterClients {
  readonly #d: GpuClusterClientsDeps;
  readonly #clients = new Map<string, Promise<KubeApi>>();

  constructor(d: GpuClusterClientsDeps) {
    this.#d = d;
  }

  async client(clusterId: string): Promise<KubeApi> {
    let c = this.#clients.get(clusterId);
    if (!c) {
      const cr = this.#d.observed.clusterResource(clusterId);
      if (!cr) throw new Error(`cluster ${clusterId} has no Cluster resource`);
      c = this.#d.clusterClient(cr);
      this.#clients.set(clusterId, c);
      c.catch(() => this.#clients.delete(clusterId));
    }
    return c;
  }

  /** Lets go of the GPU clusters' connections. */
  close(): void {
    for (const c of this.#clients.values()) void c.then((k) => (k as { close?: () => void }).close?.()).catch(() => {});
    this.#clients.clear();
  }
}
