// A cluster as the API shows it: the Postgres row (identity and history) joined with the Cluster
// resource's status (probe, token metadata). A deregistered cluster has no resource any more.
import type { Cluster } from "@berth/crds";
import type { Knex } from "knex";
import { findClusterById } from "../../db/operations/clusters/findClusterById.ts";
import { listClusters } from "../../db/operations/clusters/listClusters.ts";
import type { ClusterRow } from "../../db/operations/clusters/types.ts";
import type { Deps } from "../../deps.ts";
import { NotFound } from "../../errors.ts";
import { clustersOf } from "./runtime.ts";

export interface ClusterView {
  row: ClusterRow;
  resource?: Cluster;
  inventory: { nodes: number; gpus: number };
}

async function inventoryCounts(db: Knex, ids: string[]): Promise<Map<string, { nodes: number; gpus: number }>> {
  if (ids.length === 0) return new Map();
  const rows = (await db("cluster_nodes")
    .select("cluster_id")
    .select(db.raw("count(*)::int as nodes"), db.raw("coalesce(sum(gpu_count), 0)::int as gpus"))
    .whereIn("cluster_id", ids)
    .groupBy("cluster_id")) as { cluster_id: string; nodes: number; gpus: number }[];
  return new Map(rows.map((r) => [r.cluster_id, { nodes: r.nodes, gpus: r.gpus }]));
}

/** A registered cluster, or NotFound (also for a deregistered one unless `includeDeregistered`). */
export async function getClusterView(
  deps: Deps,
  id: string,
  opts: { includeDeregistered?: boolean } = {},
): Promise<ClusterView> {
  const row = await findClusterById(deps.db, id);
  if (!row || (row.deregistered_at && !opts.includeDeregistered)) throw new NotFound("cluster", id);
  const resource = row.deregistered_at ? undefined : await clustersOf(deps).store.getCluster(id);
  const counts = await inventoryCounts(deps.db, [id]);
  return { row, ...(resource ? { resource } : {}), inventory: counts.get(id) ?? { nodes: 0, gpus: 0 } };
}

export async function listClusterViews(
  deps: Deps,
  q: { page: number; size: number; includeDeregistered?: boolean },
): Promise<{ views: ClusterView[]; total: number }> {
  const { rows, total } = await listClusters(deps.db, {
    includeDeregistered: q.includeDeregistered ?? false,
    limit: q.size,
    offset: (q.page - 1) * q.size,
  });
  if (rows.length === 0) return { views: [], total };
  // One list call for the page instead of a GET per cluster; fleets are tens of clusters, not thousands.
  const resources = new Map((await clustersOf(deps).store.listClusters()).map((c) => [c.spec.id, c]));
  const counts = await inventoryCounts(
    deps.db,
    rows.map((r) => r.id),
  );
  return {
    views: rows.map((row) => {
      const resource = row.deregistered_at ? undefined : resources.get(row.id);
      return { row, ...(resource ? { resource } : {}), inventory: counts.get(row.id) ?? { nodes: 0, gpus: 0 } };
    }),
    total,
  };
}
