// What the reclaim loop reads per pass: the activity rows of the sessions it looks at and when each
// cluster's sources last reported.
import type { Knex } from "knex";

export interface ActivityRow {
  session_id: string;
  cluster_id: string;
  user_active_at: Date | null;
  notebook_state: string | null;
  notebook_seen_at: Date | null;
  notebook_active_at: Date | null;
  gpu_seen_at: Date | null;
  gpu_utilization: number | null;
  gpu_active_at: Date | null;
}

export async function activityOf(db: Knex, sessionIds: readonly string[]): Promise<Map<string, ActivityRow>> {
  const out = new Map<string, ActivityRow>();
  for (let i = 0; i < sessionIds.length; i += 1000) {
    const rows = (await db("session_activity").whereIn(
      "session_id",
      sessionIds.slice(i, i + 1000) as string[],
    )) as ActivityRow[];
    for (const r of rows) out.set(r.session_id, r);
  }
  return out;
}

/** `${cluster}/${source}` → last report. */
export async function sourcesSeen(db: Knex): Promise<Map<string, Date>> {
  const rows = (await db("activity_sources").select("cluster_id", "source", "seen_at")) as {
    cluster_id: string;
    source: string;
    seen_at: Date;
  }[];
  return new Map(rows.map((r) => [`${r.cluster_id}/${r.source}`, r.seen_at]));
}
