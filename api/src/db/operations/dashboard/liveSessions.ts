import type { Knex } from "knex";
import { type SessionFilter, whereVisible } from "./sessionFilter.ts";

export interface LiveSessionRow {
  id: string;
  display_name: string | null;
  phase: string;
  gpu_model: string;
  gpu_count: number;
  cluster_id: string | null;
  started_at: Date | null;
  paused_at: Date | null;
}

export async function liveSessions(
  db: Knex,
  f: SessionFilter,
  phases: string[],
  limit: number,
): Promise<LiveSessionRow[]> {
  return whereVisible(db("sessions as s"), f)
    .whereIn("s.phase", phases)
    .orderBy("s.created_at", "desc")
    .limit(limit)
    .select(
      "s.id",
      "s.display_name",
      "s.phase",
      "s.gpu_model",
      "s.gpu_count",
      "s.cluster_id",
      "s.started_at",
      "s.paused_at",
    );
}
