import type { Knex } from "knex";
import { selectPage } from "../../page.ts";
import type { OrganizationRow } from "./types.ts";

export interface ListOrganizationsQuery {
  /** Absent: every organization (super_admin). */
  ids?: string[];
  limit: number;
  offset: number;
}

export async function listOrganizations(
  db: Knex,
  q: ListOrganizationsQuery,
): Promise<{ rows: OrganizationRow[]; total: number }> {
  const base = db<OrganizationRow>("organizations");
  if (q.ids) base.whereIn("id", q.ids);
  base.select("*").orderBy([{ column: "name" }, { column: "id" }]);
  return selectPage<OrganizationRow>(db, base, q);
}
