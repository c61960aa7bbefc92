import type { Knex } from "knex";
import type { OrganizationRow } from "./types.ts";

export interface ListOrganizationsQuery {
  /** Absent: every organization (super_admin). */
  ids?: string[];
  limit: number;
  offset: number;
}

export async function listOrganizations(db: Knex, q: ListOrganizationsQuery): Promise<{ rows: OrganizationRow[]; total: number }> {
  const base = db<OrganizationRow>("organizations");
  if (q.ids) base.whereIn("id", q.ids);
  const [count] = await base.clone().count<{ count: string }[]>({ count: "*" });
  const rows = (await base
    .select("*")
    .orderBy([{ column: "name" }, { column: "id" }])
    .limit(q.limit)
    .offset(q.offset)) as OrganizationRow[];
  return { rows, total: Number(count?.count ?? 0) };
}
