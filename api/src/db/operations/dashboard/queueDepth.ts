import type { Knex } from "knex";
import { type SessionFilter, whereVisible } from "./sessionFilter.ts";

export async function queueDepth(db: Knex, f: SessionFilter): Promise<{ depth: number; oldest: Date | null }> {
  const r = await whereVisible(db("sessions as s"), f)
    .where("s.phase", "Queued")
    .select(db.raw("count(*)::int as depth"), db.raw("min(coalesce(s.queued_at, s.created_at)) as oldest"))
    .first();
  return { depth: r?.depth ?? 0, oldest: r?.oldest ?? null };
}
