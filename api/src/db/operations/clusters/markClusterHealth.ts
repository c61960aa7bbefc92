// The worker's view of whether each registered cluster still reports (clusters.unreachable_since). Setting
// or clearing it fires the fleet's webhook events (migration 20261126001000_fleet_webhooks.ts).
import type { Knex } from "knex";

export interface ClusterHealthRow {
  id: string;
  name: string;
  last_report_at: Date | null;
  unreachable_since: Date | null;
}

/** Registered clusters silent since before `cutoff` (never reported: since registration) become unreachable. */
export async function markUnreachable(db: Knex, cutoff: Date, at: Date): Promise<ClusterHealthRow[]> {
  return (await db("clusters")
    .whereNull("deregistered_at")
    .whereNull("unreachable_since")
    .whereRaw("coalesce(last_report_at, registered_at) < ?", [cutoff])
    .update({ unreachable_since: at })
    .returning(["id", "name", "last_report_at", "unreachable_since"])) as ClusterHealthRow[];
}

/** Unreachable registered clusters that reported since `cutoff` are reachable again. */
export async function markReachable(db: Knex, cutoff: Date): Promise<ClusterHealthRow[]> {
  return (await db("clusters")
    .whereNull("deregistered_at")
    .whereNotNull("unreachable_since")
    .where("last_report_at", ">=", cutoff)
    .update({ unreachable_since: null })
    .returning(["id", "name", "last_report_at", "unreachable_since"])) as ClusterHealthRow[];
}
