import { type MovementRow, movementsQuery } from "../../db/operations/ledger/listMovements.ts";
import { type PagedBody, paginate } from "../../db/paging.ts";
import type { Deps } from "../../deps.ts";
import type { Principal } from "../identity/principal.ts";
import { visibleWalletIds } from "./access.ts";

/** Allocations, grants, approved requests, refills and reversals the caller may see (either wallet). */
export async function listMovements<Out>(
  deps: Pick<Deps, "db">,
  p: Principal,
  q: { page: number; size: number; wallet_id?: string | undefined; kind?: string | undefined },
  present: (m: MovementRow) => Out,
): Promise<PagedBody<Out>> {
  const ids = await visibleWalletIds(deps.db, p);
  const f: { walletId?: string; kind?: string } = {};
  if (q.wallet_id && (ids === "all" || ids.includes(q.wallet_id))) f.walletId = q.wallet_id;
  if (q.kind) f.kind = q.kind;
  return paginate(deps.db, movementsQuery(deps.db, ids, f), { page: q.page, size: q.size }, present);
}
