import type { Knex } from "knex";
import { type SessionFilter, whereVisible } from "./sessionFilter.ts";
import { usageSecondsSource } from "./usageSeconds.ts";

export interface SpendRow {
  organization_id: string;
  /** The organization's and project's names now (a report reads better by name; ids stay the key). */
  organization_name: string | null;
  project_id: string | null;
  project_name: string | null;
  /** Minor units, charges less their reversals. */
  spent: string;
  gpu_seconds: number;
}

/**
 * Credits charged since `from` by organization and project (reversed charges taken off), with the GPU-seconds
 * of their samples (the daily roll-up for whole days; `source` lets the bench compare the raw sum).
 */
export async function spendByProject(
  db: Knex,
  f: SessionFilter,
  from: Date,
  to?: Date,
  source: typeof usageSecondsSource = usageSecondsSource,
): Promise<SpendRow[]> {
  const charges = whereVisible(
    db("ledger_transactions as t").join("sessions as s", "s.id", "t.session_id").where("t.kind", "charge"),
    f,
  ).where("t.created_at", ">=", from);
  if (to) charges.where("t.created_at", "<", to);
  const rows: { organization_id: string; project_id: string | null; charged: string; reversed: string }[] =
    await charges
      .leftJoin("ledger_transactions as r", "r.reverses_seq", "t.seq")
      .groupBy("s.organization_id", "s.project_id")
      .orderBy([{ column: "s.organization_id" }, { column: "s.project_id" }])
      .select(
        "s.organization_id",
        "s.project_id",
        db.raw("coalesce(sum(t.amount), 0)::text as charged"),
        db.raw("coalesce(sum(r.amount), 0)::text as reversed"),
      );
  const usage = whereVisible(db.from(source(db, from, to).as("u")).join("sessions as s", "s.id", "u.session"), f);
  const seconds: { organization_id: string; project_id: string | null; seconds: number }[] = await usage
    .groupBy("s.organization_id", "s.project_id")
    .select("s.organization_id", "s.project_id", db.raw("coalesce(sum(u.gpu_seconds), 0)::float8 as seconds"));
  const key = (o: string, p: string | null) => `${o}/${p ?? ""}`;
  const out = new Map<string, SpendRow>();
  for (const r of rows)
    out.set(key(r.organization_id, r.project_id), {
      organization_id: r.organization_id,
      organization_name: null,
      project_id: r.project_id,
      project_name: null,
      spent: (BigInt(r.charged) - BigInt(r.reversed)).toString(),
      gpu_seconds: 0,
    });
  for (const s of seconds) {
    const k = key(s.organization_id, s.project_id);
    const row = out.get(k) ?? {
      organization_id: s.organization_id,
      organization_name: null,
      project_id: s.project_id,
      project_name: null,
      spent: "0",
      gpu_seconds: 0,
    };
    row.gpu_seconds = Number(s.seconds);
    out.set(k, row);
  }
  const rowsOut = [...out.values()];
  const orgIds = [...new Set(rowsOut.map((r) => r.organization_id))];
  const projectIds = [...new Set(rowsOut.flatMap((r) => (r.project_id ? [r.project_id] : [])))];
  const names = async (table: string, ids: string[]): Promise<{ id: string; name: string }[]> =>
    ids.length ? db(table).whereIn("id", ids).select("id", "name") : [];
  const [orgs, projects] = await Promise.all([names("organizations", orgIds), names("projects", projectIds)]);
  const orgName = new Map(orgs.map((o) => [o.id, o.name]));
  const projectName = new Map(projects.map((o) => [o.id, o.name]));
  for (const r of rowsOut) {
    r.organization_name = orgName.get(r.organization_id) ?? null;
    r.project_name = r.project_id ? (projectName.get(r.project_id) ?? null) : null;
  }
  return rowsOut.sort((a, b) =>
    key(a.organization_id, a.project_id).localeCompare(key(b.organization_id, b.project_id)),
  );
}
