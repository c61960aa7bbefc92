// Cordon, uncordon, drain and delete of a node, carried out by the control plane on the node's cluster
// with the cluster's registered credential. The inventory row is updated at once (optimistically); the
// operator's next snapshot confirms or corrects it. Every action is recorded with what it did.
//
// Drain = cordon, then evict (Eviction API, so disruption budgets are respected) every pod of the
// session namespace on the node: those are Berth's session pods. Pods of other namespaces are not
// Berth's to move. A refused eviction (429: a budget) or any other failure is reported per pod and the
// outcome is `partial`; what the eviction means for the session is the sessions domain's business.

import { type KubeApi, KubeError, KubeTransportError, seg } from "@berth/controllers/kube";
import { findClusterById } from "../../db/operations/clusters/findClusterById.ts";
import { recordNodeAction } from "../../db/operations/inventory/recordNodeAction.ts";
import type { ClusterNodeRow } from "../../db/operations/inventory/types.ts";
import { deleteNode, findNode, setNodeSchedulable } from "../../db/operations/inventory/updateNode.ts";
import type { Deps } from "../../deps.ts";
import { type DomainError, Invalid, NotFound, Unavailable } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { requireSuperAdmin } from "./authorize.ts";
import { clustersOf } from "./runtime.ts";

export type NodeAction = "cordon" | "uncordon" | "drain" | "delete";

export interface EvictionOutcome {
  pod: string;
  namespace: string;
  result: "evicted" | "gone" | "blocked" | "failed";
  message?: string;
}

export interface NodeActionResult {
  clusterId: string;
  node: string;
  action: NodeAction;
  outcome: "success" | "partial";
  schedulable?: boolean;
  deleted?: boolean;
  evictions?: EvictionOutcome[];
  /** The inventory row after the optimistic update; absent when the node is gone or was never reported. */
  inventory?: ClusterNodeRow;
}

/** A cluster call that failed, as an answer: unreachable → 503, refused → 503 with the cluster's status. */
function clusterFailure(clusterId: string, e: unknown): DomainError {
  if (e instanceof KubeTransportError)
    return new Unavailable(`cluster ${clusterId} did not answer: ${e.message}`, {
      cluster_id: clusterId,
      reason: e.reason,
    });
  if (e instanceof KubeError)
    return new Unavailable(`cluster ${clusterId} refused the request: ${refusal(e)}`, {
      cluster_id: clusterId,
      cluster_status: e.status,
    });
  return e as DomainError;
}

/** Each call to the cluster gives up after this long (TIMEOUT: "no answer before the deadline"). */
const CALL_MS = 30_000;
// The signal decides, not the client's per-request timeout.
const deadline = () => ({ signal: AbortSignal.timeout(CALL_MS), timeoutMs: 2 * CALL_MS });

/** The refusal as this answer has always worded it: `PATCH /api/v1/nodes/x -> 404: its message`. */
const refusal = (e: KubeError) =>
  `${e.method} ${e.path} -> ${e.status}${e.statusMessage ? `: ${e.statusMessage}` : ""}`;

async function setUnschedulable(kube: KubeApi, node: string, unschedulable: boolean): Promise<void> {
  await kube.json("PATCH", `/api/v1/nodes/${seg(node)}`, { body: { spec: { unschedulable } }, ...deadline() });
}

async function evictSessionPods(kube: KubeApi, namespace: string, node: string): Promise<EvictionOutcome[]> {
  const q = new URLSearchParams({ fieldSelector: `spec.nodeName=${node}` });
  const pods = await kube.json<{ items?: { metadata?: { name?: string } }[] }>(
    "GET",
    `/api/v1/namespaces/${seg(namespace)}/pods?${q}`,
    deadline(),
  );
  const names = (pods.items ?? []).map((p) => p.metadata?.name).filter((n): n is string => !!n);
  return Promise.all(
    names.map(async (pod): Promise<EvictionOutcome> => {
      const res = await kube.request<{ message?: string }>(
        "POST",
        `/api/v1/namespaces/${seg(namespace)}/pods/${seg(pod)}/eviction`,
        { body: { apiVersion: "policy/v1", kind: "Eviction", metadata: { name: pod, namespace } }, ...deadline() },
      );
      if (res.status >= 200 && res.status < 300) return { pod, namespace, result: "evicted" };
      if (res.status === 404) return { pod, namespace, result: "gone" };
      const message = res.body?.message ?? `HTTP ${res.status}`;
      return { pod, namespace, result: res.status === 429 ? "blocked" : "failed", message };
    }),
  );
}

export async function runNodeAction(
  deps: Deps,
  principal: Principal,
  clusterId: string,
  node: string,
  action: NodeAction,
  reason?: string,
): Promise<NodeActionResult> {
  requireSuperAdmin(principal, `${action} nodes`);
  if (action === "uncordon" && !reason) {
    // Berth cordoned it for hardware faults: putting it back in service is a decision worth its why.
    const last = await deps
      .db("cluster_node_actions")
      .where({ cluster_id: clusterId, node_name: node })
      .whereIn("action", ["cordon", "drain"])
      .whereIn("outcome", ["success", "partial"])
      .orderBy("id", "desc")
      .first("actor_id", "result");
    if (last && last.actor_id === null && (last.result as { reason?: unknown })?.reason !== undefined)
      throw new Invalid("this node was cordoned for hardware faults: uncordon it with a reason", [
        {
          path: ["body", "reason"],
          message: "required to uncordon a node cordoned for hardware faults",
          code: "required",
        },
      ]);
  }
  return carryOutNodeAction(deps, principal.userId, clusterId, node, action, reason);
}

/**
 * The action itself, for an administrator (runNodeAction) or for Berth (`actorId` null: the hardware-fault
 * rule, domain/nodeFaults). `reason` is recorded with it and carried by its webhook.
 */
export async function carryOutNodeAction(
  deps: Deps,
  actorId: string | null,
  clusterId: string,
  node: string,
  action: NodeAction,
  reason?: string,
): Promise<NodeActionResult> {
  const rt = clustersOf(deps);
  const row = await findClusterById(deps.db, clusterId);
  if (!row || row.deregistered_at) throw new NotFound("cluster", clusterId);
  const resource = await rt.store.getCluster(clusterId);
  if (!resource) throw new NotFound("cluster", clusterId);
  const kube = await rt.clients.forCluster(resource);
  const at = deps.clock.now();
  const record = (outcome: "success" | "partial" | "failure", result: Record<string, unknown>) =>
    recordNodeAction(deps.db, {
      cluster_id: clusterId,
      node_name: node,
      action,
      actor_id: actorId,
      outcome,
      result: reason !== undefined ? { ...result, reason } : result,
      at,
    });
  try {
    let result: NodeActionResult;
    if (action === "cordon" || action === "uncordon") {
      await setUnschedulable(kube, node, action === "cordon");
      const inventory = await setNodeSchedulable(deps.db, clusterId, node, action === "uncordon");
      result = {
        clusterId,
        node,
        action,
        outcome: "success",
        schedulable: action === "uncordon",
        ...(inventory ? { inventory } : {}),
      };
    } else if (action === "drain") {
      await setUnschedulable(kube, node, true);
      const inventory = await setNodeSchedulable(deps.db, clusterId, node, false);
      const evictions = await evictSessionPods(kube, rt.options.targetNamespaces.sessions, node);
      const outcome = evictions.every((e) => e.result === "evicted" || e.result === "gone") ? "success" : "partial";
      result = { clusterId, node, action, outcome, schedulable: false, evictions, ...(inventory ? { inventory } : {}) };
    } else {
      await kube.json("DELETE", `/api/v1/nodes/${seg(node)}`, deadline());
      await deleteNode(deps.db, clusterId, node);
      result = { clusterId, node, action, outcome: "success", deleted: true };
    }
    await record(result.outcome, {
      schedulable: result.schedulable,
      deleted: result.deleted,
      evictions: result.evictions,
    });
    deps.log.info(
      { kind: "Node", cluster: clusterId, name: node, action, outcome: result.outcome },
      "node action carried out",
    );
    return result;
  } catch (e) {
    if (e instanceof KubeError && e.status === 404) {
      await record("failure", { error: "node not found on the cluster" });
      // The cluster says the node is gone: so is its inventory row (unless a snapshot brings it back).
      if (await findNode(deps.db, clusterId, node)) await deleteNode(deps.db, clusterId, node);
      throw new NotFound("node", `${clusterId}/${node}`);
    }
    await record("failure", { error: (e as Error).message });
    throw clusterFailure(clusterId, e);
  }
}
