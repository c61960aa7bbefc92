// Free and total GPUs by cluster and model, from the operators' inventory (Postgres) and what Berth's
// own sessions hold (a fresh placement is counted before the inventory shows its pod).

import { inventoryByClusterModel } from "../../db/operations/sessions/fleetModels.ts";
import { gpuHoldings } from "../../db/operations/sessions/gpuHoldings.ts";
import type { Deps } from "../../deps.ts";

export interface Availability {
  clusters: {
    clusterId: string;
    clusterName: string;
    gpuModel: string;
    total: number;
    inUse: number;
    free: number;
    nodes: number;
    largestNode: number;
  }[];
  models: { gpuModel: string; total: number; free: number; queued: number }[];
}

export async function gpuAvailability(deps: Deps): Promise<Availability> {
  const [inv, held, queued] = await Promise.all([
    inventoryByClusterModel(deps.db),
    gpuHoldings(deps.db),
    deps
      .db("sessions")
      .where({ phase: "Queued" })
      .groupBy("gpu_model")
      .select("gpu_model", deps.db.raw("count(*)::int as n")) as Promise<{ gpu_model: string; n: number }[]>,
  ]);
  const clusters = inv.map((r) => {
    const ours = held.find((h) => h.cluster_id === r.cluster_id && h.gpu_model === r.gpu_model)?.gpus ?? 0;
    const inUse = Math.min(r.allocatable, Math.max(r.in_use, ours));
    return {
      clusterId: r.cluster_id,
      clusterName: r.cluster_name,
      gpuModel: r.gpu_model,
      total: r.allocatable,
      inUse,
      free: r.allocatable - inUse,
      nodes: r.nodes,
      largestNode: r.largest_node,
    };
  });
  const models = new Map<string, { gpuModel: string; total: number; free: number; queued: number }>();
  for (const c of clusters) {
    const m = models.get(c.gpuModel) ?? { gpuModel: c.gpuModel, total: 0, free: 0, queued: 0 };
    m.total += c.total;
    m.free += c.free;
    models.set(c.gpuModel, m);
  }
  for (const q of queued) {
    const m = models.get(q.gpu_model) ?? { gpuModel: q.gpu_model, total: 0, free: 0, queued: 0 };
    m.queued = q.n;
    models.set(q.gpu_model, m);
  }
  return { clusters, models: [...models.values()].sort((a, b) => a.gpuModel.localeCompare(b.gpuModel)) };
}
