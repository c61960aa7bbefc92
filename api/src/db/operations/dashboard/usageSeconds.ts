// GPU-seconds of the usage samples whose period starts in [from, to), as rows (session, gpu_seconds):
// whole UTC days from the daily roll-up (usage_daily, kept exact by Postgres, migration
// 20261126002100), the ragged ends of the range from the samples themselves. A month from its first
// midnight reads one row per session and day; an hour inside a day reads that hour's samples.
import type { Knex } from "knex";

const DAY_MS = 86_400_000;
const isoDay = (d: Date): string => d.toISOString().slice(0, 10);

export function usageSecondsSource(db: Knex, from: Date, to?: Date): Knex.QueryBuilder {
  const firstDay = new Date(Math.ceil(from.getTime() / DAY_MS) * DAY_MS);
  const endDay = to ? new Date(Math.floor(to.getTime() / DAY_MS) * DAY_MS) : undefined;
  const raw = (a: Date, b?: Date) => rawUsageSecondsSource(db, a, b);
  // No whole day inside the range: the samples alone.
  if (endDay && endDay <= firstDay) return raw(from, to);
  const days = db("usage_daily").select("session", "gpu_seconds").where("day", ">=", isoDay(firstDay));
  if (endDay) days.where("day", "<", isoDay(endDay));
  const parts: Knex.QueryBuilder[] = [];
  if (from < firstDay) parts.push(raw(from, firstDay));
  if (to && endDay && endDay < to) parts.push(raw(endDay, to));
  return parts.length === 0 ? days : days.unionAll(parts, true);
}

/** The same figure straight from the samples: the baseline the roll-up is checked and measured against. */
export function rawUsageSecondsSource(db: Knex, from: Date, to?: Date): Knex.QueryBuilder {
  const q = db("usage_samples").select("session", "gpu_seconds").where("period_start", ">=", from);
  return to ? q.where("period_start", "<", to) : q;
}
