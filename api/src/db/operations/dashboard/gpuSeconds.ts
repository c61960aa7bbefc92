import type { Knex } from "knex";
import { type SessionFilter, whereVisible } from "./sessionFilter.ts";

export async function gpuSeconds(db: Knex, f: SessionFilter, from: Date): Promise<number> {
  const r = await whereVisible(db("usage_samples as u").join("sessions as s", "s.id", "u.session"), f)
    .where("u.period_start", ">=", from)
    .select(db.raw("coalesce(sum(u.gpu_seconds), 0)::float8 as seconds"))
    .first();
  return Number(r?.seconds ?? 0);
}
