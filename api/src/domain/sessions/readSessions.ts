// Lists and detail. Lists page in SQL over the history rows (the worker keeps them in step with the
// resources); detail reads the live resource for conditions and the newest phase.
import { listSessionRows, type SessionFilter } from "../../db/operations/sessions/listSessions.ts";
import { type SessionView, viewFromResource, viewFromRow } from "../../db/operations/sessions/view.ts";
import type { Page, PagedBody } from "../../db/paging.ts";
import type { Deps } from "../../deps.ts";
import type { Principal } from "../identity/principal.ts";
import { readResource, visibleRow } from "./lookup.ts";
import { visibilityOf } from "./visibility.ts";

export async function listSessions(
  deps: Deps,
  principal: Principal,
  scope: "mine" | "all",
  page: Page,
  filter: SessionFilter,
): Promise<PagedBody<SessionView>> {
  const { rows, total } = await listSessionRows(deps.db, visibilityOf(principal, scope), filter, {
    limit: page.size,
    offset: (page.page - 1) * page.size,
  });
  return { data: rows.map(viewFromRow), pagination: { page: page.page, size: page.size, total } };
}

export async function getSession(deps: Deps, principal: Principal, id: string): Promise<SessionView> {
  const row = await visibleRow(deps, principal, id);
  const cr = await readResource(deps, row);
  return cr ? viewFromResource(row, cr) : viewFromRow(row);
}
