import type { Knex } from "knex";
import type { EntryRow, TransactionRow } from "./types.ts";

export async function findTransactionByKey(db: Knex, key: string): Promise<TransactionRow | undefined> {
  return (await db("ledger_transactions").where({ idempotency_key: key }).first()) as TransactionRow | undefined;
}

export async function findTransactionBySeq(db: Knex, seq: string): Promise<TransactionRow | undefined> {
  return (await db("ledger_transactions").where({ seq }).first()) as TransactionRow | undefined;
}

export async function findTransactionById(db: Knex, id: string): Promise<TransactionRow | undefined> {
  return (await db("ledger_transactions").where({ id }).first()) as TransactionRow | undefined;
}

export async function entriesOf(db: Knex, seqs: readonly string[]): Promise<EntryRow[]> {
  if (seqs.length === 0) return [];
  return (await db("ledger_entries").whereIn("txn_seq", seqs).orderBy("id")) as EntryRow[];
}
