// The ledger's one write path. Every movement of credits is a transaction of balanced legs in integer
// minor units, appended to Postgres (api/src/db/migrations/20261122000006_ledger.ts): the database
// refuses updates and deletes, checks that each transaction sums to zero, keeps the cached balances
// equal to the entries and refuses a balance below a wallet's floor. This file adds what the database
// cannot know: which wallets to lock, and whether the payer can pay before trying.
import type { Knex } from "knex";
import { findTransactionByKey } from "../../db/operations/ledger/findTransaction.ts";
import { insertTransactions, type NewLeg, type NewTransaction } from "../../db/operations/ledger/insertTransactions.ts";
import { lockWallets } from "../../db/operations/ledger/lockWallets.ts";
import type { TransactionKind, TransactionRow, WalletRow } from "../../db/operations/ledger/types.ts";
import { CHECK_VIOLATION, sqlState, UNIQUE_VIOLATION } from "../../db/sqlstate.ts";
import { DomainError } from "../../errors.ts";
import { billingId } from "./ids.ts";
import { max, units } from "./money.ts";

export type { NewLeg, NewTransaction };

/** What a wallet can give now: its balance down to its floor (0, or minus its overdraft). */
export function spendable(w: Pick<WalletRow, "balance" | "overdraft" | "allow_negative">): bigint {
  if (w.allow_negative) return 1n << 62n;
  return max(0n, units(w.balance) + units(w.overdraft));
}

export function insufficient(w: WalletRow, amount: bigint): DomainError {
  return new DomainError("insufficient_credits", `wallet ${w.id} cannot pay ${amount} units`, {
    wallet_id: w.id,
    spendable: spendable(w).toString(),
    requested: amount.toString(),
  });
}

/** Merges legs per wallet and drops zero ones; throws when they do not sum to zero. */
export function balancedLegs(legs: readonly NewLeg[]): NewLeg[] {
  const by = new Map<string, bigint>();
  for (const l of legs) by.set(l.walletId, (by.get(l.walletId) ?? 0n) + l.amount);
  let sum = 0n;
  const out: NewLeg[] = [];
  for (const [walletId, amount] of by) {
    sum += amount;
    if (amount !== 0n) out.push({ walletId, amount });
  }
  if (sum !== 0n) throw new Error(`unbalanced ledger transaction: legs sum to ${sum}`);
  return out;
}

export interface Transfer {
  kind: Exclude<TransactionKind, "charge">;
  fromWalletId: string;
  toWalletId: string;
  amount: bigint;
  actorKind: "user" | "system";
  actorId: string | null;
  requestId?: string | null;
  reason?: string | null;
  organizationId?: string | null;
  /** Exactly-once key: a second transfer with it answers the first one's transaction. */
  idempotencyKey?: string | null;
  metadata?: Record<string, unknown>;
  at: Date;
  /** Move what the payer can give, up to `amount` (refills); default: all or nothing. */
  partial?: boolean;
}

export interface TransferResult {
  transaction: TransactionRow | null;
  moved: bigint;
  /** True when the idempotency key had already moved credits: nothing new happened. */
  replayed: boolean;
  from: WalletRow;
  to: WalletRow;
}

/**
 * The transaction a transfer appends, decided on the payer as locked (its balance is the truth): what
 * moves, or 409 `insufficient_credits` (with `partial`, what it can; nothing: no transaction). Pure, so a
 * writer that locks many wallets at once (a bulk import's chunk) appends exactly what `transfer` would.
 */
export function planTransfer(
  t: Transfer,
  from: WalletRow,
  to: Pick<WalletRow, "id" | "organization_id">,
): { moved: bigint; txn: NewTransaction | null } {
  const can = spendable(from);
  let moved = t.amount;
  if (can < t.amount) {
    if (!t.partial) throw insufficient(from, t.amount);
    moved = can;
  }
  if (moved === 0n) return { moved, txn: null };
  return {
    moved,
    txn: {
      id: billingId("txn"),
      kind: t.kind,
      amount: moved,
      legs: [
        { walletId: from.id, amount: -moved },
        { walletId: to.id, amount: moved },
      ],
      idempotencyKey: t.idempotencyKey ?? null,
      organizationId: t.organizationId ?? to.organization_id ?? from.organization_id,
      actorKind: t.actorKind,
      actorId: t.actorId,
      requestId: t.requestId ?? null,
      reason: t.reason ?? null,
      metadata: t.metadata ?? {},
      at: t.at,
    },
  };
}

/**
 * Moves credits from one wallet to another inside `tx`: locks both (id order), checks the payer's floor,
 * appends one transaction of two legs. A payer that cannot pay: 409 `insufficient_credits` (or, with
 * `partial`, what it can). Two concurrent transfers from one wallet queue on its lock, so together they
 * never take more than it holds.
 */
export async function transfer(tx: Knex.Transaction, t: Transfer): Promise<TransferResult> {
  if (t.amount < 0n) throw new Error("a transfer moves a non-negative amount");
  if (t.fromWalletId === t.toWalletId) throw new DomainError("bad_request", "a wallet cannot pay itself");
  if (t.idempotencyKey) {
    const done = await findTransactionByKey(tx, t.idempotencyKey);
    if (done) return replay(tx, t, done);
  }
  const locked = await lockWallets(tx, [t.fromWalletId, t.toWalletId]);
  const from = locked.get(t.fromWalletId);
  const to = locked.get(t.toWalletId);
  if (!from || !to) throw new Error(`wallet ${from ? t.toWalletId : t.fromWalletId} does not exist`);
  const { moved, txn } = planTransfer(t, from, to);
  if (!txn) return { transaction: null, moved: 0n, replayed: false, from, to };
  try {
    const { inserted } = await insertTransactions(tx, [txn]);
    const row = inserted.get(txn.id);
    if (!row) {
      // The key was taken between our look and our insert (a concurrent twin): answer its result.
      const done = t.idempotencyKey ? await findTransactionByKey(tx, t.idempotencyKey) : undefined;
      if (done) return replay(tx, t, done);
      throw new Error("ledger insert answered nothing");
    }
    const after = await lockWallets(tx, [from.id, to.id]);
    return {
      transaction: row,
      moved,
      replayed: false,
      from: after.get(from.id) as WalletRow,
      to: after.get(to.id) as WalletRow,
    };
  } catch (err) {
    // The floor CHECK is the last guard: a balance changed by someone who did not lock (never ours).
    if (sqlState(err) === CHECK_VIOLATION) throw insufficient(from, t.amount);
    throw err;
  }
}

async function replay(tx: Knex.Transaction, t: Transfer, done: TransactionRow): Promise<TransferResult> {
  const locked = await lockWallets(tx, [t.fromWalletId, t.toWalletId]);
  return {
    transaction: done,
    moved: units(done.amount),
    replayed: true,
    from: locked.get(t.fromWalletId) as WalletRow,
    to: locked.get(t.toWalletId) as WalletRow,
  };
}

/**
 * Reverses a transaction: the same legs with their signs flipped, once (a second reversal of the same
 * transaction is refused by a unique index). The reversed-from wallets must be able to give back.
 */
export async function reverse(
  tx: Knex.Transaction,
  original: TransactionRow,
  r: { actorKind: "user" | "system"; actorId: string | null; requestId?: string | null; reason: string; at: Date },
): Promise<TransactionRow> {
  if (original.kind === "reversal")
    throw new DomainError("conflict", "a reversal is not reversed; post a new movement");
  if (await tx("ledger_transactions").where({ reverses_seq: original.seq }).first("seq"))
    throw new DomainError("conflict", `transaction ${original.id} was already reversed`);
  const legs = (await tx("ledger_entries").where({ txn_seq: original.seq })) as { wallet_id: string; amount: string }[];
  const locked = await lockWallets(
    tx,
    legs.map((l) => l.wallet_id),
  );
  for (const l of legs) {
    const w = locked.get(l.wallet_id) as WalletRow;
    const back = units(l.amount);
    if (back > 0n && spendable(w) < back) throw insufficient(w, back);
  }
  const txn: NewTransaction = {
    id: billingId("txn"),
    kind: "reversal",
    amount: units(original.amount),
    legs: balancedLegs(legs.map((l) => ({ walletId: l.wallet_id, amount: -units(l.amount) }))),
    organizationId: original.organization_id,
    reversesSeq: original.seq,
    actorKind: r.actorKind,
    actorId: r.actorId,
    requestId: r.requestId ?? null,
    reason: r.reason,
    at: r.at,
  };
  try {
    const { inserted } = await insertTransactions(tx, [txn]);
    const row = inserted.get(txn.id);
    if (!row) throw new DomainError("conflict", `transaction ${original.id} was already reversed`);
    return row;
  } catch (err) {
    if (sqlState(err) === UNIQUE_VIOLATION)
      throw new DomainError("conflict", `transaction ${original.id} was already reversed`);
    throw err;
  }
}
