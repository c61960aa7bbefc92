// Allocations: an administrator moves credits between two wallets of one organization (down to a project
// or a person, and back), or a super_admin issues credits from the system wallet to an organization (a
// grant) and takes them back. The caller must manage the paying wallet and see the receiving one.
import type { Deps } from "../../deps.ts";
import { DomainError, Forbidden } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { walletFor } from "./access.ts";
import { SYSTEM_WALLET } from "./ids.ts";
import { type TransferResult, transfer } from "./ledger.ts";

export interface AllocationInput {
  fromWalletId: string;
  toWalletId: string;
  amount: bigint;
  reason: string;
}

export async function allocate(
  deps: Pick<Deps, "db" | "clock">,
  p: Principal,
  input: AllocationInput,
  ctx: { requestId: string; idempotencyKey?: string },
): Promise<TransferResult> {
  const { wallet: from } = await walletFor(deps.db, p, input.fromWalletId, "manage");
  const { wallet: to } = await walletFor(deps.db, p, input.toWalletId, "see");
  if (from.id === to.id) throw new DomainError("bad_request", "a wallet cannot pay itself");
  const system = from.id === SYSTEM_WALLET || to.id === SYSTEM_WALLET;
  if (system) {
    if (!p.isSuperAdmin) throw new Forbidden("only super_admins issue credits");
    const other = from.id === SYSTEM_WALLET ? to : from;
    if (other.owner_kind !== "organization")
      throw new DomainError("bad_request", "the system wallet pays organizations only; organizations pass credits on");
  } else if (from.organization_id === null || from.organization_id !== to.organization_id) {
    throw new DomainError("bad_request", "credits move between wallets of one organization");
  }
  const kind = from.id === SYSTEM_WALLET ? "grant" : "allocation";
  return deps.db.transaction((tx) =>
    transfer(tx, {
      kind,
      fromWalletId: from.id,
      toWalletId: to.id,
      amount: input.amount,
      actorKind: "user",
      actorId: p.userId,
      requestId: ctx.requestId,
      reason: input.reason,
      organizationId: system
        ? from.id === SYSTEM_WALLET
          ? to.organization_id
          : from.organization_id
        : from.organization_id,
      // The route layer's Idempotency-Key already replays the answer; this makes the ledger itself refuse
      // a second movement for the same key, even if the key's row expired or a replica crashed mid-way.
      idempotencyKey: ctx.idempotencyKey ? `api:${p.userId}:allocation:${ctx.idempotencyKey}` : null,
      at: deps.clock.now(),
    }),
  );
}
