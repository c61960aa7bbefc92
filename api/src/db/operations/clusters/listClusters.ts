import type { Knex } from "knex";
import { selectPage } from "../../page.ts";
import type { ClusterRow } from "./types.ts";

export interface ListClustersQuery {
  /** Also list deregistered clusters (history). */
  includeDeregistered?: boolean;
  limit: number;
  offset: number;
}

export async function listClusters(db: Knex, q: ListClustersQuery): Promise<{ rows: ClusterRow[]; total: number }> {
  const base = db<ClusterRow>("clusters");
  if (!q.includeDeregistered) base.whereNull("deregistered_at");
  base.select("*").orderBy([{ column: "registered_at" }, { column: "id" }]);
  return selectPage<ClusterRow>(db, base, q);
}

/** Every registered cluster (fleet-wide loops: probes, npm start). */
export async function listRegisteredClusters(db: Knex): Promise<ClusterRow[]> {
  return (await db<ClusterRow>("clusters").whereNull("deregistered_at").orderBy("registered_at")) as ClusterRow[];
}
