// The ledger's invariants as queries. Tests run them after every case; an operator can run them against
// production (`checkLedgerInvariants(db)` answers the violations, empty when all hold).
import type { Knex } from "knex";
import { storageChargeMismatches } from "../../db/operations/volumes/storageBilling.ts";

export interface Violation {
  invariant: string;
  detail: Record<string, unknown>;
}

export async function checkLedgerInvariants(db: Knex): Promise<Violation[]> {
  const out: Violation[] = [];
  const q = async (invariant: string, sql: string) => {
    const r = (await db.raw(sql)) as { rows: Record<string, unknown>[] };
    for (const row of r.rows) out.push({ invariant, detail: row });
  };
  await q(
    "each transaction balances",
    `SELECT txn_seq::text, sum(amount)::text AS sum FROM ledger_entries GROUP BY txn_seq HAVING sum(amount) <> 0 LIMIT 20`,
  );
  await q(
    "every balance equals its entries",
    `SELECT w.id, w.balance::text, coalesce(s.total, 0)::text AS entries
       FROM wallets w LEFT JOIN (SELECT wallet_id, sum(amount) AS total FROM ledger_entries GROUP BY wallet_id) s ON s.wallet_id = w.id
      WHERE w.balance IS NOT NULL AND w.balance <> coalesce(s.total, 0) LIMIT 20`,
  );
  await q(
    "every wallet's last sequence is its newest entry's",
    `SELECT w.id, w.last_sequence::text, s.newest::text
       FROM wallets w JOIN (SELECT wallet_id, max(txn_seq) AS newest FROM ledger_entries GROUP BY wallet_id) s ON s.wallet_id = w.id
      WHERE w.balance IS NOT NULL AND w.last_sequence <> s.newest LIMIT 20`,
  );
  await q(
    "no non-negative wallet below its floor",
    `SELECT id, balance::text, overdraft::text FROM wallets WHERE NOT allow_negative AND coalesce(balance, 0) + overdraft < 0 LIMIT 20`,
  );
  await q(
    "each usage interval is billed once",
    `SELECT cluster_id, sample_id, count(*)::int AS charges FROM ledger_transactions WHERE kind = 'charge' AND sample_id IS NOT NULL GROUP BY cluster_id, sample_id HAVING count(*) > 1 LIMIT 20`,
  );
  await q(
    "every billed usage sample has its charge",
    `SELECT s.cluster_id, s.sample_id FROM usage_samples s
      WHERE s.billed_at IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.kind = 'charge' AND t.cluster_id = s.cluster_id AND t.sample_id = s.sample_id)
      LIMIT 20`,
  );
  await q(
    "every charge is of a billed usage sample",
    `SELECT t.seq::text, t.cluster_id, t.sample_id FROM ledger_transactions t
      WHERE t.kind = 'charge' AND t.reason IS DISTINCT FROM 'storage'
        AND NOT EXISTS (SELECT 1 FROM usage_samples s WHERE s.cluster_id = t.cluster_id AND s.sample_id = t.sample_id AND s.billed_at IS NOT NULL)
      LIMIT 20`,
  );
  await q(
    "a transaction's amount is what it moved",
    `SELECT t.seq::text, t.amount::text, coalesce(s.credited, 0)::text AS credited FROM ledger_transactions t
       LEFT JOIN (SELECT txn_seq, sum(amount) FILTER (WHERE amount > 0) AS credited FROM ledger_entries GROUP BY txn_seq) s ON s.txn_seq = t.seq
      WHERE t.amount <> coalesce(s.credited, 0) LIMIT 20`,
  );
  await q(
    "a session's charges add up to what billing says it charged",
    `SELECT b.session_id, b.charged::text, coalesce(s.total, 0)::text AS charges FROM billing_sessions b
       LEFT JOIN (SELECT session_id, sum(amount) AS total FROM ledger_transactions WHERE kind = 'charge' GROUP BY session_id) s ON s.session_id = b.session_id
      WHERE b.charged <> coalesce(s.total, 0) LIMIT 20`,
  );
  // Storage charges (domain/credits/storage.ts) are of volumes, not samples.
  for (const row of await storageChargeMismatches(db))
    out.push({ invariant: "a volume's storage charges add up to what billing says it charged", detail: row });
  await q(
    "a snapshot's storage charges add up to what billing says it charged",
    `SELECT b.snapshot_id, b.charged::text, coalesce(s.total, 0)::text AS charges FROM billing_snapshots b
       LEFT JOIN (SELECT metadata->>'snapshot' AS snapshot_id, sum(amount) AS total FROM ledger_transactions
                   WHERE kind = 'charge' AND reason = 'storage' GROUP BY 1) s ON s.snapshot_id = b.snapshot_id
      WHERE b.charged <> coalesce(s.total, 0) LIMIT 20`,
  );
  return out;
}
