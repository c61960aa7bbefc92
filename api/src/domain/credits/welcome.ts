// The welcome credit: an organization may give each new member an amount from its own wallet, once. The
// movement is an ordinary `allocation` (organization → the person's wallet in it) whose ledger key is
// `welcome:<organization>:<user>`: the ledger's unique key, not a flag of ours, is what makes it once, so
// removing and re-adding a member, a second import or two admins adding them together never pay twice.
// When the organization's wallet cannot cover it the member is added all the same, the movement does not
// happen (a later re-add tries again) and the caller is told (the answer's `welcome_credit`, a
// notification to the admin who added them).
import type { Knex } from "knex";
import type { Deps } from "../../deps.ts";
import { DomainError, Forbidden, NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { canAdminOrganization, canSeeOrganization, scopeOf } from "../identity/scope.ts";
import { notify } from "../notifications/notify.ts";
import { type Transfer, transfer } from "./ledger.ts";
import { formatCredits, units } from "./money.ts";
import { ensureWallet } from "./wallets.ts";

export type WelcomeOutcome =
  | { status: "none" }
  | { status: "given"; amount: bigint; transactionId: string }
  | { status: "already_given"; amount: bigint }
  | { status: "unpaid"; amount: bigint; spendable: string };

export const welcomeKey = (organizationId: string, userId: string) => `welcome:${organizationId}:${userId}`;

export async function welcomeAmount(db: Knex, organizationId: string): Promise<bigint> {
  const row = await db("organization_welcome_credits").where({ organization_id: organizationId }).first("amount");
  return units(row?.amount ?? 0);
}

/** Seen by its members (else 404); read and set by its admins (else 403), like its wallet. */
async function organizationFor(deps: Pick<Deps, "db">, p: Principal, organizationId: string) {
  const s = scopeOf(p);
  const org = canSeeOrganization(s, organizationId)
    ? await deps.db("organizations").where({ id: organizationId }).first("id")
    : undefined;
  if (!org) throw new NotFound("organization", organizationId);
  if (!canAdminOrganization(s, organizationId))
    throw new Forbidden("only the organization's admins see and set its welcome credit");
}

export async function getWelcomeCredit(deps: Pick<Deps, "db">, p: Principal, organizationId: string) {
  await organizationFor(deps, p, organizationId);
  const row = await deps.db("organization_welcome_credits").where({ organization_id: organizationId }).first();
  return {
    amount: units(row?.amount ?? 0),
    updatedBy: (row?.updated_by as string | null) ?? null,
    updatedAt: (row?.updated_at as Date | undefined) ?? null,
  };
}

export async function setWelcomeCredit(
  deps: Pick<Deps, "db" | "clock">,
  p: Principal,
  organizationId: string,
  amount: bigint,
) {
  await organizationFor(deps, p, organizationId);
  await deps
    .db("organization_welcome_credits")
    .insert({
      organization_id: organizationId,
      amount: amount.toString(),
      updated_by: p.userId,
      updated_at: deps.clock.now(),
    })
    .onConflict("organization_id")
    .merge();
  return getWelcomeCredit(deps, p, organizationId);
}

/**
 * Pays the welcome credit of a member who just joined, inside the caller's transaction. `transfer`
 * answers a key already used as a replay and refuses a payer short of credits before writing anything,
 * so the caller's transaction stays usable either way. A bulk import passes what it already knows
 * (the amount, the wallets) to spare the look-ups.
 */
export async function giveWelcomeCredit(
  tx: Knex.Transaction,
  w: {
    organizationId: string;
    userId: string;
    actorKind: "user" | "system";
    actorId: string | null;
    requestId?: string | null;
    at: Date;
    known?: { amount: bigint; organizationWalletId: string; userWalletId?: string };
  },
): Promise<WelcomeOutcome> {
  const amount = w.known?.amount ?? (await welcomeAmount(tx, w.organizationId));
  if (amount === 0n) return { status: "none" };
  const from =
    w.known?.organizationWalletId ??
    (await ensureWallet(tx, { organizationId: w.organizationId, kind: "organization", id: w.organizationId }, w.at))
      .wallet.id;
  const to =
    w.known?.userWalletId ??
    (await ensureWallet(tx, { organizationId: w.organizationId, kind: "user", id: w.userId }, w.at)).wallet.id;
  return payWelcome((t) => transfer(tx, t), { ...w, amount, fromWalletId: from, toWalletId: to });
}

/**
 * The welcome movement itself, once ever by its ledger key, through `move` (ledger.ts transfer in a
 * transaction; the user import's dry run plays it in memory): a wallet short of it is `unpaid`, not an error.
 */
export async function payWelcome(
  move: (t: Transfer) => Promise<{ replayed: boolean; transaction?: { id: string } | null }>,
  w: {
    organizationId: string;
    userId: string;
    actorKind: "user" | "system";
    actorId: string | null;
    requestId?: string | null;
    at: Date;
    amount: bigint;
    fromWalletId: string;
    toWalletId: string;
  },
): Promise<WelcomeOutcome> {
  try {
    const r = await move({
      kind: "allocation",
      fromWalletId: w.fromWalletId,
      toWalletId: w.toWalletId,
      amount: w.amount,
      actorKind: w.actorKind,
      actorId: w.actorId,
      requestId: w.requestId ?? null,
      reason: "welcome credit",
      organizationId: w.organizationId,
      idempotencyKey: welcomeKey(w.organizationId, w.userId),
      metadata: { welcome: true },
      at: w.at,
    });
    if (r.replayed) return { status: "already_given", amount: w.amount };
    return { status: "given", amount: w.amount, transactionId: r.transaction?.id ?? "" };
  } catch (err) {
    if (err instanceof DomainError && err.code === "insufficient_credits")
      return { status: "unpaid", amount: w.amount, spendable: String(err.details.spendable ?? "0") };
    throw err;
  }
}

/** Tells the admin who added the member that the welcome credit was not paid (the bell). */
export async function reportUnpaidWelcome(
  db: Knex,
  o: { adminId: string; organizationId: string; memberEmail: string; outcome: WelcomeOutcome; at: Date },
): Promise<void> {
  if (o.outcome.status !== "unpaid") return;
  await notify(db, {
    userId: o.adminId,
    organizationId: o.organizationId,
    kind: "credits.welcome_unpaid",
    title: "Welcome credit not paid",
    body: `${o.memberEmail} was added, but the organization's wallet (${formatCredits(units(o.outcome.spendable))} credits spendable) cannot pay the welcome credit of ${formatCredits(o.outcome.amount)}. Top the wallet up and allocate it by hand, or remove and add the member again.`,
    data: { member_email: o.memberEmail, amount: o.outcome.amount.toString(), spendable: o.outcome.spendable },
    at: o.at,
  });
}
