import type { SessionsBed } from "@berth/e2e/sessions";

/**
 * Postgres' own counters for the bench's database (every client: API, worker, reports), which hold in both
 * modes. A backend publishes its counts at most once a second while busy and within 10 s once idle, so a
 * reading waits that out first (after the phase's timings are taken).
 */
export type PgStat = Record<"xacts" | "inserted" | "updated" | "deleted" | "returned" | "fetched", number> & {
  /** Rows read per table: [sequential scans, index scans' fetches] (pg_stat_user_tables). */
  tables: Map<string, [number, number]>;
};
export async function pgStat(db: SessionsBed["t"]["database"]["db"]): Promise<PgStat> {
  await new Promise((r) => setTimeout(r, 11_000));
  const { rows } = await db.raw(
    `select xact_commit + xact_rollback as xacts, tup_inserted as inserted, tup_updated as updated,
            tup_deleted as deleted, tup_returned as returned, tup_fetched as fetched
       from pg_stat_database where datname = current_database()`,
  );
  const r = rows[0] as Record<string, string>;
  const t = await db.raw(
    "select relname, coalesce(seq_tup_read, 0) as seq, coalesce(idx_tup_fetch, 0) as idx from pg_stat_user_tables",
  );
  const tables = new Map<string, [number, number]>(
    (t.rows as { relname: string; seq: string; idx: string }[]).map((x) => [x.relname, [Number(x.seq), Number(x.idx)]]),
  );
  const counts = Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Number(v)])) as Omit<PgStat, "tables">;
  return { ...counts, tables };
}
/** The three tables that gave up the most rows between two readings, per session. */
function topTables(a: PgStat, b: PgStat, per: number): string {
  const rows = [...b.tables].map(([name, [seq, idx]]) => {
    const [seq0, idx0] = a.tables.get(name) ?? [0, 0];
    return { name, seq: (seq - seq0) / per, idx: (idx - idx0) / per };
  });
  rows.sort((x, y) => y.seq + y.idx - (x.seq + x.idx));
  return rows
    .slice(0, 3)
    .map((x) => `${x.name} ${x.seq.toFixed(0)} by sequential scans + ${x.idx.toFixed(0)} by index`)
    .join(", ");
}
// tup_returned counts live rows read by sequential scans and index entries returned by index scans alike.
export const showPg = (a: PgStat, b: PgStat, per: number) =>
  `${((b.xacts - a.xacts) / per).toFixed(1)} transactions (a statement outside one counts as one), rows ${((b.inserted - a.inserted) / per).toFixed(1)} inserted, ${((b.updated - a.updated) / per).toFixed(1)} updated, ${((b.deleted - a.deleted) / per).toFixed(1)} deleted, ${((b.fetched - a.fetched) / per).toFixed(0)} fetched, ${((b.returned - a.returned) / per).toFixed(0)} returned by scans of either kind (pg_stat_database); rows read, most: ${topTables(a, b, per)}`;
