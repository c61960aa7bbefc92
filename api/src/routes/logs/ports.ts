// Where a session's logs come from: its cluster's Kubernetes API with the registered credential. A port
// so that route tests can serve logs from a stub apiserver.
import type { IncomingMessage } from "node:http";
import type { Deps } from "../../deps.ts";
import { clustersOf } from "../../domain/clusters/runtime.ts";
import { Unavailable } from "../../errors.ts";
import { openPodLog, type PodLogRequest } from "./podLog.ts";

export interface PodLogs {
  open(clusterId: string, r: PodLogRequest): Promise<IncomingMessage>;
}

export function registeredCredentialLogs(deps: Deps): PodLogs {
  return {
    async open(clusterId, r) {
      const rt = clustersOf(deps);
      const resource = await rt.store.getCluster(clusterId);
      if (!resource) throw new Unavailable(`cluster ${clusterId} is not registered`, { cluster_id: clusterId });
      return openPodLog(await rt.clients.forCluster(resource), r);
    },
  };
}
