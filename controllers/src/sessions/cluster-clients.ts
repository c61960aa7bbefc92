// A registered GPU cluster's client by its Berth id (dispatch.ts writes mirrors with it, claims-pass.ts
// releases claims and purges volumes). Nothing is kept here: the process's one cluster-clients service
// (api/src/domain/clusters/clients.ts, behind `clusterClient`) keeps a client per cluster and makes a new
// one when the cluster's credential changes, so a rotated credential is used from the next dispatch on.
import type { Cluster } from "@berth/crds";
import type { KubeApi } from "../kube/client.ts";
import type { Observed } from "./observed.ts";

export interface GpuClusterClientsDeps {
  observed: Pick<Observed, "clusterResource">;
  /** The registered GPU cluster's client, from the process's service (which keeps and renews it). */
  clusterClient(cluster: Cluster): Promise<KubeApi>;
}

export class GpuClusterClients {
  readonly #d: GpuClusterClientsDeps;

  constructor(d: GpuClusterClientsDeps) {
    this.#d = d;
  }

  async client(clusterId: string): Promise<KubeApi> {
    const cr = this.#d.observed.clusterResource(clusterId);
    if (!cr) throw new Error(`cluster ${clusterId} has no Cluster resource`);
    return this.#d.clusterClient(cr);
  }
}
