// Session and ledger figures for the dashboard, each narrowed by a filter the domain builds from the
// caller's role (domain/dashboard/summary.ts): everything, some organizations, or one owner.
import type { Knex } from "knex";

export interface SessionFilter {
  all?: boolean;
  organizationIds?: readonly string[];
  projectIds?: readonly string[];
  ownerId?: string;
  /** With ownerId: only in these organizations (a member who left one no longer sees its sessions). */
  ownerOrganizationIds?: readonly string[];
  clusterId?: string;
}

/** Applies the filter to a query over `sessions` aliased `s`. */
export function whereVisible(q: Knex.QueryBuilder, f: SessionFilter): Knex.QueryBuilder {
  if (f.clusterId) q.where("s.cluster_id", f.clusterId);
  if (f.all) return q;
  return q.where((w) => {
    let any = false;
    if (f.ownerId) {
      any = true;
      w.orWhere((o) => {
        o.where("s.owner_id", f.ownerId as string);
        if (f.ownerOrganizationIds) o.whereIn("s.organization_id", [...f.ownerOrganizationIds]);
      });
    }
    if (f.organizationIds?.length) {
      any = true;
      w.orWhereIn("s.organization_id", [...f.organizationIds]);
    }
    if (f.projectIds?.length) {
      any = true;
      w.orWhereIn("s.project_id", [...f.projectIds]);
    }
    if (!any) w.whereRaw("false");
  });
}

const LIVE = ["Terminated", "Failed"];

export async function sessionsByPhase(db: Knex, f: SessionFilter): Promise<{ phase: string; count: number }[]> {
  return whereVisible(db("sessions as s"), f)
    .whereNotIn("s.phase", LIVE)
    .groupBy("s.phase")
    .orderBy("s.phase")
    .select("s.phase", db.raw("count(*)::int as count"));
}

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

export async function queueDepth(db: Knex, f: SessionFilter): Promise<{ depth: number; oldest: Date | null }> {
  const r = await whereVisible(db("sessions as s"), f)
    .where("s.phase", "Queued")
    .select(db.raw("count(*)::int as depth"), db.raw("min(coalesce(s.queued_at, s.created_at)) as oldest"))
    .first();
  return { depth: r?.depth ?? 0, oldest: r?.oldest ?? null };
}

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

export async function gpuSeconds(db: Knex, f: SessionFilter, from: Date): Promise<number> {
  const r = await whereVisible(db("usage_samples as u").join("sessions as s", "s.id", "u.session"), f)
    .where("u.period_start", ">=", from)
    .select(db.raw("coalesce(sum(u.gpu_seconds), 0)::float8 as seconds"))
    .first();
  return Number(r?.seconds ?? 0);
}

export interface SpendRow {
  organization_id: string;
  project_id: string | null;
  /** Minor units, charges less their reversals. */
  spent: string;
  gpu_seconds: number;
}

/** Credits charged since `from` by organization and project (reversed charges taken off). */
export async function spendByProject(db: Knex, f: SessionFilter, from: Date, to?: Date): Promise<SpendRow[]> {
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
  const usage = whereVisible(db("usage_samples as u").join("sessions as s", "s.id", "u.session"), f).where(
    "u.period_start",
    ">=",
    from,
  );
  if (to) usage.where("u.period_start", "<", to);
  const seconds: { organization_id: string; project_id: string | null; seconds: number }[] = await usage
    .groupBy("s.organization_id", "s.project_id")
    .select("s.organization_id", "s.project_id", db.raw("coalesce(sum(u.gpu_seconds), 0)::float8 as seconds"));
  const key = (o: string, p: string | null) => `${o}/${p ?? ""}`;
  const out = new Map<string, SpendRow>();
  for (const r of rows)
    out.set(key(r.organization_id, r.project_id), {
      organization_id: r.organization_id,
      project_id: r.project_id,
      spent: (BigInt(r.charged) - BigInt(r.reversed)).toString(),
      gpu_seconds: 0,
    });
  for (const s of seconds) {
    const k = key(s.organization_id, s.project_id);
    const row = out.get(k) ?? {
      organization_id: s.organization_id,
      project_id: s.project_id,
      spent: "0",
      gpu_seconds: 0,
    };
    row.gpu_seconds = Number(s.seconds);
    out.set(k, row);
  }
  return [...out.values()].sort((a, b) =>
    key(a.organization_id, a.project_id).localeCompare(key(b.organization_id, b.project_id)),
  );
}

/**
 * GPUs of running sessions whose usage samples of the last `windowMinutes` say the GPU is nearly idle
 * (mean utilisation under `belowPercent`), per cluster and model. Sessions without GPU figures are not
 * counted: idle is only said when it is known.
 */
export async function allocatedButIdle(
  db: Knex,
  since: Date,
  belowPercent: number,
  clusterId?: string,
): Promise<{ cluster_id: string; gpu_model: string; gpus: number }[]> {
  const q = db
    .with(
      "idle",
      db("sessions as s")
        .join("usage_samples as u", "u.session", "s.id")
        .where("s.phase", "Running")
        .where("u.period_end", ">=", since)
        .whereNotNull("u.gpu_utilization")
        .groupBy("s.id", "s.cluster_id", "s.gpu_model", "s.gpu_count")
        .havingRaw("avg(u.gpu_utilization) < ?", [belowPercent])
        .select("s.cluster_id", "s.gpu_model", "s.gpu_count"),
    )
    .from("idle")
    .groupBy("cluster_id", "gpu_model")
    .select("cluster_id", "gpu_model", db.raw("sum(gpu_count)::int as gpus"));
  if (clusterId) q.where("cluster_id", clusterId);
  return q;
}

/** Balance (minor units) of a user's own wallets, over every organization they are in. */
export async function userBalance(db: Knex, userId: string, organizationIds: readonly string[]): Promise<bigint> {
  if (organizationIds.length === 0) return 0n;
  const r = await db("wallets as w")
    .where({ "w.owner_kind": "user", "w.owner_id": userId })
    .whereIn("w.organization_id", [...organizationIds])
    .select(
      db.raw(
        "coalesce(sum(coalesce(w.balance, (select coalesce(sum(e.amount), 0) from ledger_entries e where e.wallet_id = w.id))), 0)::text as balance",
      ),
    )
    .first();
  return BigInt(r?.balance ?? "0");
}
