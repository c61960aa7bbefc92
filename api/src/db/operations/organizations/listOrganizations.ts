import type { Knex } from "knex";
import { pageQuery } from "../../page.ts";
import type { OrganizationRow } from "./types.ts";

export interface ListOrganizationsQuery {
  /** Absent: every organization (super_admin). */
  ids?: string[];
  limit: number;
  offset: number;
}

// Compiled once per shape of its parameters (db/page.ts, pageQuery): it may read `p` only as values.
const organizationsPage = pageQuery<OrganizationRow, { ids: readonly string[] | undefined }>(
  "organizations",
  (db, p) => {
    const base = db<OrganizationRow>("organizations");
    if (p.ids) base.whereIn("id", p.ids);
    return base.select("*").orderBy([{ column: "name" }, { column: "id" }]);
  },
);

export async function listOrganizations(
  db: Knex,
  q: ListOrganizationsQuery,
): Promise<{ rows: OrganizationRow[]; total: number }> {
  return organizationsPage(db, { ids: q.ids }, q);
}
