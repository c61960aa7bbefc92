// A wallet's ledger for export: the caller must see the wallet (404 otherwise, before anything is sent);
// the lines then come in pages as the answer is written.
import { type LedgerFilter, walletLedgerPages } from "../../db/operations/ledger/listWalletLedger.ts";
import type { WalletLedgerLine } from "../../db/operations/ledger/types.ts";
import type { Deps } from "../../deps.ts";
import type { Principal } from "../identity/principal.ts";
import { walletFor } from "./access.ts";

export async function exportWalletLedger(
  deps: Pick<Deps, "db">,
  p: Principal,
  walletId: string,
  filter: LedgerFilter,
): Promise<{ walletId: string; pages: AsyncIterable<WalletLedgerLine[]> }> {
  const { wallet } = await walletFor(deps.db, p, walletId);
  return { walletId: wallet.id, pages: walletLedgerPages(deps.db, wallet.id, filter) };
}
