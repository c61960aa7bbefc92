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
    const rows = (await tx("ledger_transactions")
      .insert(
        chunk.map((t) => ({
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
        })),
      )
      .modify((q) => {
        if (opts.onDuplicate === "fail") q.returning(["seq", "id"]);
        else q.onConflict().ignore().returning("*");
      })) as TransactionRow[];
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
    if (legs.length > 0) await tx("ledger_entries").insert(legs);
  }
  return { inserted, duplicates };
}
