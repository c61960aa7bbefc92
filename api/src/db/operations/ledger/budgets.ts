import type { Knex } from "knex";

export interface BudgetRow {
  organization_id: string;
  period: "daily" | "weekly" | "monthly";
  amount: string;
  updated_by: string;
  created_at: Date;
  updated_at: Date;
}

export async function findBudget(db: Knex, organizationId: string): Promise<BudgetRow | undefined> {
  return (await db("budgets").where({ organization_id: organizationId }).first()) as BudgetRow | undefined;
}

export async function upsertBudget(
  db: Knex,
  b: { organizationId: string; period: BudgetRow["period"]; amount: bigint; by: string; at: Date },
): Promise<{ row: BudgetRow; created: boolean }> {
  const r = (await db.raw(
    `INSERT INTO budgets (organization_id, period, amount, updated_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (organization_id) DO UPDATE SET period = excluded.period, amount = excluded.amount,
       updated_by = excluded.updated_by, updated_at = excluded.updated_at
     RETURNING *, (xmax = 0) AS created`,
    [b.organizationId, b.period, b.amount.toString(), b.by, b.at, b.at],
  )) as { rows: (BudgetRow & { created: boolean })[] };
  const { created, ...row } = r.rows[0] as BudgetRow & { created: boolean };
  return { row, created };
}

export async function deleteBudget(db: Knex, organizationId: string): Promise<boolean> {
  return (await db("budgets").where({ organization_id: organizationId }).delete()) > 0;
}

export function budgetsQuery(db: Knex, organizationIds: string[] | "all"): Knex.QueryBuilder {
  const q = db("budgets").select("*").orderBy("organization_id");
  if (organizationIds !== "all") q.whereIn("organization_id", organizationIds);
  return q;
}
