import type { Knex } from "knex";

// The ledger's balance check, made cheaper: every statement's legs must balance per transaction, checked
// on the statement's own rows (an in-memory aggregate) instead of re-reading each transaction's legs from
// the table. Equivalent for the ledger (a transaction whose every statement balances sums to zero), and
// stricter (legs added later must balance by themselves). Charging writes thousands of legs a statement.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION berth_ledger_entries_applied() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE bad bigint;
    BEGIN
      SELECT txn_seq INTO bad FROM new_entries GROUP BY txn_seq HAVING sum(amount) <> 0 LIMIT 1;
      IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'ledger transaction % does not balance', bad USING ERRCODE = '23514';
      END IF;
      UPDATE wallets w SET balance = w.balance + s.delta, last_sequence = greatest(w.last_sequence, s.seq)
        FROM (SELECT wallet_id, sum(amount) AS delta, max(txn_seq) AS seq FROM new_entries GROUP BY wallet_id) s
        WHERE w.id = s.wallet_id AND w.balance IS NOT NULL;
      RETURN NULL;
    END $$;
  `);
}
