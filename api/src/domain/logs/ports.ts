// Where a session's logs come from: its cluster's Kubernetes API with the registered credential. A port
// so that route tests can serve logs from a stub apiserver; what the cluster answers becomes the
// contract's refusals here (openSessionLog), whichever port served it.
import type { IncomingMessage } from "node:http";
import { KubeError, KubeTransportError } from "@berth/controllers/kube";
import type { Deps } from "../../deps.ts";
import { Conflict, type DomainError, Unavailable } from "../../errors.ts";
import { clustersOf } from "../clusters/runtime.ts";
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

/** The pod's log through `logs`; a cluster that does not answer or refuses is 503, a pod without a log 409. */
export async function openSessionLog(logs: PodLogs, clusterId: string, r: PodLogRequest): Promise<IncomingMessage> {
  try {
    return await logs.open(clusterId, r);
  } catch (e) {
    throw logFailure(clusterId, e);
  }
}

function logFailure(clusterId: string, e: unknown): DomainError | unknown {
  if (e instanceof KubeTransportError)
    return new Unavailable(`cluster ${clusterId} did not answer: ${e.message}`, {
      cluster_id: clusterId,
      reason: e.reason,
    });
  if (e instanceof KubeError) {
    // 404: the pod is gone (paused, restarting); 400: its container has not started yet.
    if (e.status === 404 || e.status === 400)
      return new Conflict("the session's pod has no log to show right now", {
        reason: "no_pod_log",
        cluster_status: e.status,
      });
    return new Unavailable(
      `cluster ${clusterId} refused to show the log: ${e.method} ${e.path} -> ${e.status}${e.statusMessage ? `: ${e.statusMessage}` : ""}`,
      {
        cluster_id: clusterId,
        cluster_status: e.status,
      },
    );
  }
  return e;
}
