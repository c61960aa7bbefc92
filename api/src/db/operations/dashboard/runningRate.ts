import type { Knex } from "knex";
import { type SessionFilter, whereVisible } from "./sessionFilter.ts";

/** Hourly credit rate (minor units) of running sessions: the offering's rate for its GPU count, scaled. */
export async function runningRate(db: Knex, f: SessionFilter): Promise<bigint> {
  const r = await whereVisible(db("sessions as s"), f)
    .where("s.phase", "Running")
    .select(
      db.raw(
        "coalesce(sum(s.hourly_credit_rate::numeric * s.gpu_count / greatest(coalesce(s.offering_gpu_count, s.gpu_count), 1)), 0)::bigint::text as rate",
      ),
    )
    .first();
  return BigInt(r?.rate ?? "0");
}
