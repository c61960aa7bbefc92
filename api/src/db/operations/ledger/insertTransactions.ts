// Appends ledger transactions and their legs. Each transaction's legs are inserted by the same statement,
// so the entries trigger checks each transaction balances and moves the cached balances by exactly its
// legs. A transaction whose idempotency key (or charge sample) is already in the ledger is skipped whole
// (ON CONFLICT DO NOTHING) and reported as a duplicate.
import type { Knex } from "knex";
import type { TransactionKind, TransactionRow } from "./types.ts";

export interface NewLeg {
  walletId: string;
  /** Signed minor units; negative leaves the wallet. Never zero. */
  amount: bigint;
}

export interface NewTransaction {
  id: string;
  kind: TransactionKind;
  amount: bigint;
  legs: NewLeg[];
  idempotencyKey?: string | null;
  organizationId?: string | null;
  sessionId?: string | null;
  clusterId?: string | null;
  sampleId?: string | null;
  reversesSeq?: string | null;
  actorKind: "user" | "operator" | "system";
  actorId?: string | null;
  requestId?: string | null;
  reason?: string | null;
  metadata?: Record<string, unknown>;
  at: Date;
}

// Postgres takes at most 65,535 bind parameters per statement.
const TXN_CHUNK = 2_000;

/**
 * `onDuplicate: "fail"` (charging: the samples were locked unbilled, so a duplicate is a bug) inserts
 * plainly and lets a unique violation abort the transaction; it is much cheaper than ON CONFLICT's
 * speculative insertion, and answers only seq and id of each row.
 */
export async function insertTransactions(
  tx: Knex.Transaction,
  txns: readonly NewTransaction[],
  opts: { onDuplicate?: "skip" | "fail" } = {},
): Promise<{ inserted: Map<string, TransactionRow>; duplicates: NewTransaction[] }> {
  const inserted = new Map<string, TransactionRow>();
  const duplicates: NewTransaction[] = [];
  for (let i = 0; i < txns.length; i += TXN_CHUNK) {
    const chunk = txns.slice(i, i + TXN_CHUNK);
    const rows = opts.onDuplicate === "fail" ? await insertPlain(tx, chunk) : await insertSkippingDuplicates(tx, chunk);
    for (const r of rows) inserted.set(r.id, r);
    const legs: { txn_seq: string; wallet_id: string; amount: string; created_at: Date }[] = [];
    for (const t of chunk) {
      const row = inserted.get(t.id);
      if (!row) {
        duplicates.push(t);
        continue;
      }
      for (const l of t.legs)
        legs.push({ txn_seq: row.seq, wallet_id: l.walletId, amount: l.amount.toString(), created_at: t.at });
    }
    // One statement for the whole chunk: the legs of one transaction never straddle two statements.
    if (legs.length > 0)
      await tx.raw(
        "INSERT INTO ledger_entries (txn_seq, wallet_id, amount, created_at) SELECT * FROM unnest(?::bigint[], ?::text[], ?::bigint[], ?::timestamptz[])",
        [
          legs.map((l) => l.txn_seq),
          legs.map((l) => l.wallet_id),
          legs.map((l) => l.amount),
          legs.map((l) => l.created_at),
        ],
      );
  }
  return { inserted, duplicates };
}

function rowOf(t: NewTransaction) {
  return {
    id: t.id,
    kind: t.kind,
    amount: t.amount.toString(),
    idempotency_key: t.idempotencyKey ?? null,
    organization_id: t.organizationId ?? null,
    session_id: t.sessionId ?? null,
    cluster_id: t.clusterId ?? null,
    sample_id: t.sampleId ?? null,
    reverses_seq: t.reversesSeq ?? null,
    actor_kind: t.actorKind,
    actor_id: t.actorId ?? null,
    request_id: t.requestId ?? null,
    reason: t.reason ?? null,
    metadata: JSON.stringify(t.metadata ?? {}),
    created_at: t.at,
  };
}

async function insertSkippingDuplicates(
  tx: Knex.Transaction,
  chunk: readonly NewTransaction[],
): Promise<TransactionRow[]> {
  return (await tx("ledger_transactions")
    .insert(chunk.map(rowOf))
    .onConflict()
    .ignore()
    .returning("*")) as TransactionRow[];
}

/** Column arrays and unnest: one bind parameter per column instead of one per value (far less to build). */
async function insertPlain(tx: Knex.Transaction, chunk: readonly NewTransaction[]): Promise<TransactionRow[]> {
  const rows = chunk.map(rowOf);
  // Arrays with nulls are fine for node-postgres; knex's binding type does not say so.
  const col = <K extends keyof ReturnType<typeof rowOf>>(k: K) => rows.map((r) => r[k]) as unknown as string[];
  const r = (await tx.raw(
    `INSERT INTO ledger_transactions (id, kind, amount, idempotency_key, organization_id, session_id, cluster_id, sample_id,
       reverses_seq, actor_kind, actor_id, request_id, reason, metadata, created_at)
     SELECT * FROM unnest(?::text[], ?::text[], ?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[],
       ?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], ?::jsonb[], ?::timestamptz[])
     RETURNING seq, id`,
    [
      col("id"),
      col("kind"),
      col("amount"),
      col("idempotency_key"),
      col("organization_id"),
      col("session_id"),
      col("cluster_id"),
      col("sample_id"),
      col("reverses_seq"),
      col("actor_kind"),
      col("actor_id"),
      col("request_id"),
      col("reason"),
      col("metadata"),
      col("created_at"),
    ],
  )) as { rows: TransactionRow[] };
  return r.rows;
}
