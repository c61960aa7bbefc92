import type { Knex } from "knex";
import { type SessionFilter, whereVisible } from "./sessionFilter.ts";

const LIVE = ["Terminated", "Failed"];

export async function sessionsByPhase(db: Knex, f: SessionFilter): Promise<{ phase: string; count: number }[]> {
  return whereVisible(db("sessions as s"), f)
    .whereNotIn("s.phase", LIVE)
    .groupBy("s.phase")
    .orderBy("s.phase")
    .select("s.phase", db.raw("count(*)::int as count"));
}
