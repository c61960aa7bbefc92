import type { Knex } from "knex";
import { pageQuery } from "../../page.ts";
import type { ClusterRow } from "./types.ts";

export interface ListClustersQuery {
  /** Also list deregistered clusters (history). */
  includeDeregistered?: boolean;
  limit: number;
  offset: number;
}

// Compiled once per shape of its parameters (db/page.ts, pageQuery): it may read `p` only as values.
const clustersPage = pageQuery<ClusterRow, { includeDeregistered: boolean }>("clusters", (db, p) => {
  const base = db<ClusterRow>("clusters");
  if (!p.includeDeregistered) base.whereNull("deregistered_at");
  return base.select("*").orderBy([{ column: "registered_at" }, { column: "id" }]);
});

export async function listClusters(db: Knex, q: ListClustersQuery): Promise<{ rows: ClusterRow[]; total: number }> {
  return clustersPage(db, { includeDeregistered: q.includeDeregistered === true }, q);
}

/** Every registered cluster (fleet-wide loops: probes, npm start). */
export async function listRegisteredClusters(db: Knex): Promise<ClusterRow[]> {
  return (await db<ClusterRow>("clusters").whereNull("deregistered_at").orderBy("registered_at")) as ClusterRow[];
}
