// Lists and detail. Lists page in SQL over the history rows (the worker keeps them in step with the
// resources); detail reads the live resource for conditions and the newest phase.
import { type SessionFilter, sessionsQuery } from "../../db/operations/sessions/listSessions.ts";
import type { SessionRow } from "../../db/operations/sessions/types.ts";
import type { Deps } from "../../deps.ts";
import { type Page, type PagedBody, paginate } from "../../http/paging.ts";
import type { Principal } from "../../http/principal.ts";
import { readResource, visibleRow } from "./lookup.ts";
import { type SessionView, viewFromResource, viewFromRow } from "./view.ts";
import { visibilityOf } from "./visibility.ts";

export function listSessions(
  deps: Deps,
  principal: Principal,
  scope: "mine" | "all",
  page: Page,
  filter: SessionFilter,
): Promise<PagedBody<SessionView>> {
  return paginate<SessionRow, SessionView>(
    deps.db,
    sessionsQuery(deps.db, visibilityOf(principal, scope), filter),
    page,
    viewFromRow,
  );
}

export async function getSession(deps: Deps, principal: Principal, id: string): Promise<SessionView> {
  const row = await visibleRow(deps, principal, id);
  const cr = await readResource(deps, row);
  return cr ? viewFromResource(row, cr) : viewFromRow(row);
}
