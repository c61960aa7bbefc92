import type { Knex } from "knex";
import { type SessionFilter, whereVisible } from "./sessionFilter.ts";
import { usageSecondsSource } from "./usageSeconds.ts";

/** GPU-seconds of the visible sessions' samples starting from `from` (the daily roll-up for whole days). */
export async function gpuSeconds(
  db: Knex,
  f: SessionFilter,
  from: Date,
  source: typeof usageSecondsSource = usageSecondsSource,
): Promise<number> {
  const r = await whereVisible(db.from(source(db, from).as("u")).join("sessions as s", "s.id", "u.session"), f)
    .select(db.raw("coalesce(sum(u.gpu_seconds), 0)::float8 as seconds"))
    .first();
  return Number(r?.seconds ?? 0);
}
