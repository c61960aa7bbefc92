// Issuing credits: the system wallet pays an organization's wallet (created if absent). The system
// wallet is the issuer, so its balance is minus everything issued and never in the way.
import type { Knex } from "knex";
import type { TransactionRow, WalletRow } from "../../db/operations/ledger/types.ts";
import { SYSTEM_WALLET } from "./ids.ts";
import { transfer } from "./ledger.ts";
import { ensureWallet } from "./wallets.ts";

export async function grantToOrganization(
  db: Knex,
  g: {
    organizationId: string;
    amount: bigint;
    actorKind: "user" | "system";
    actorId: string | null;
    reason: string;
    requestId?: string | null;
    idempotencyKey?: string | null;
    at: Date;
  },
): Promise<{ wallet: WalletRow; transaction: TransactionRow | null }> {
  const { wallet } = await ensureWallet(
    db,
    { organizationId: g.organizationId, kind: "organization", id: g.organizationId },
    g.at,
  );
  const r = await db.transaction((tx) =>
    transfer(tx, {
      kind: "grant",
      fromWalletId: SYSTEM_WALLET,
      toWalletId: wallet.id,
      amount: g.amount,
      actorKind: g.actorKind,
      actorId: g.actorId,
      reason: g.reason,
      requestId: g.requestId ?? null,
      idempotencyKey: g.idempotencyKey ?? null,
      organizationId: g.organizationId,
      at: g.at,
    }),
  );
  return { wallet: r.to, transaction: r.transaction };
}
