import type { Knex } from "knex";

// Credits (api/src/domain/credits/, docs/dev/billing.md). Money is integer minor units in bigint columns
// (1 credit = 1,000,000 units); node-postgres answers int8 as strings, so no amount ever becomes a JS
// number on the way out.
//
//   wallets              one per owner (user-in-organization, project, organization) plus three
//                        platform accounts: `system` (issues credits; the catalog's system Wallet),
//                        `usage` (receives every charge) and `shortfall` (usage no wallet could cover).
//                        `balance` is a cache of the wallet's entries, kept by a trigger in the
//                        transaction that writes them (NULL for the `usage` sink, which every charge
//                        touches: a cached row there would serialize all charging).
//   ledger_transactions  one movement; `seq` is the ledger's sequence number. Append-only.
//   ledger_entries       its signed legs, one per wallet; the legs of a transaction sum to zero (checked
//                        by a trigger at the end of the inserting statement). Append-only.
//   billing_sessions     per-session charging state: the remainder below one unit carried to the next
//                        sample, so per-second rounding loses nothing.
//   refills, refill_applications, credit_requests, budgets, notifications, billing_alerts.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("wallets", (t) => {
    t.text("id").primary(); // wal_<20>, or the platform accounts' fixed ids
    t.text("organization_id"); // null for the platform accounts
    t.text("owner_kind").notNullable(); // user | project | organization | system
    t.text("owner_id").notNullable();
    t.text("display_name");
    // How far below zero usage may take the balance (Wallet spec.limits.overdraft); 0 = never negative.
    t.bigInteger("overdraft").notNullable().defaultTo(0);
    t.bigInteger("max_spend_per_day");
    t.bigInteger("max_spend_per_month");
    // Only the platform accounts may be negative (`system` is the issuer, `shortfall` the unpaid usage).
    t.boolean("allow_negative").notNullable().defaultTo(false);
    t.bigInteger("balance"); // NULL: not cached (sum the entries)
    t.bigInteger("last_sequence").notNullable().defaultTo(0);
    // The Wallet resource (namespace/name) and the sequence its status last mirrored.
    t.text("cr_namespace");
    t.text("cr_name");
    t.bigInteger("mirrored_sequence").notNullable().defaultTo(-1);
    t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(["organization_id"]);
  });
  await knex.raw(`
    CREATE UNIQUE INDEX wallets_owner ON wallets (coalesce(organization_id, ''), owner_kind, owner_id);
    CREATE INDEX wallets_unmirrored ON wallets (id) WHERE last_sequence > mirrored_sequence;
    ALTER TABLE wallets ADD CONSTRAINT wallets_owner_kind CHECK (owner_kind IN ('user', 'project', 'organization', 'system'));
    ALTER TABLE wallets ADD CONSTRAINT wallets_overdraft_non_negative CHECK (overdraft >= 0);
    -- The floor, enforced where no code path can forget it: a concurrent spend that would cross it fails.
    ALTER TABLE wallets ADD CONSTRAINT wallets_balance_floor CHECK (allow_negative OR balance IS NULL OR balance + overdraft >= 0);
    INSERT INTO wallets (id, owner_kind, owner_id, display_name, allow_negative, balance, cr_namespace, cr_name)
      VALUES ('wal_system', 'system', 'system', 'System', true, 0, 'berth-system', 'system'),
             ('wal_usage', 'system', 'usage', 'Usage', true, NULL, NULL, NULL),
             ('wal_shortfall', 'system', 'shortfall', 'Unpaid usage', true, 0, NULL, NULL);
  `);

  await knex.schema.createTable("ledger_transactions", (t) => {
    t.bigIncrements("seq").primary();
    t.text("id").notNullable().unique(); // txn_<20>
    // grant | allocation | request | refill | charge | reversal
    t.text("kind").notNullable();
    // What moved, for lists and budgets (the entries are the truth): >= 0.
    t.bigInteger("amount").notNullable();
    // Exactly-once keys: usage:<cluster>:<sample>, refill:<id>:<period>, api:<caller>:<key>.
    t.text("idempotency_key").unique();
    t.text("organization_id");
    t.text("session_id");
    t.text("cluster_id");
    t.text("sample_id");
    t.bigInteger("reverses_seq");
    t.text("actor_kind").notNullable(); // user | operator | system
    t.text("actor_id");
    t.text("request_id"); // links the movement to its audit row
    t.text("reason");
    t.jsonb("metadata").notNullable().defaultTo("{}");
    t.timestamp("created_at", { useTz: true }).notNullable();
  });
  await knex.raw(`
    ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_amount_non_negative CHECK (amount >= 0);
    ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_kind CHECK (kind IN ('grant', 'allocation', 'request', 'refill', 'charge', 'reversal'));
    CREATE UNIQUE INDEX ledger_charges_once ON ledger_transactions (cluster_id, sample_id) WHERE kind = 'charge';
    CREATE UNIQUE INDEX ledger_reversed_once ON ledger_transactions (reverses_seq) WHERE reverses_seq IS NOT NULL;
    CREATE INDEX ledger_charges_by_organization ON ledger_transactions (organization_id, created_at) INCLUDE (amount) WHERE kind = 'charge';
    CREATE INDEX ledger_by_session ON ledger_transactions (session_id) WHERE session_id IS NOT NULL;
  `);

  await knex.schema.createTable("ledger_entries", (t) => {
    t.bigIncrements("id").primary();
    t.bigInteger("txn_seq").notNullable().references("seq").inTable("ledger_transactions");
    t.text("wallet_id").notNullable().references("id").inTable("wallets");
    t.bigInteger("amount").notNullable(); // signed: negative leaves the wallet
    t.timestamp("created_at", { useTz: true }).notNullable();
  });
  await knex.raw(`
    ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_non_zero CHECK (amount <> 0);
    CREATE INDEX ledger_entries_by_txn ON ledger_entries (txn_seq);
    CREATE INDEX ledger_entries_by_wallet ON ledger_entries (wallet_id, txn_seq);
  `);

  // Append-only: the database refuses to change or remove a ledger row, whoever asks. Corrections are
  // reversing transactions.
  await knex.raw(`
    CREATE FUNCTION berth_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'the ledger is append-only: % on % refused', TG_OP, TG_TABLE_NAME USING ERRCODE = 'P0001';
    END $$;
    CREATE TRIGGER ledger_transactions_append_only BEFORE UPDATE OR DELETE ON ledger_transactions
      FOR EACH ROW EXECUTE FUNCTION berth_ledger_append_only();
    CREATE TRIGGER ledger_transactions_no_truncate BEFORE TRUNCATE ON ledger_transactions
      FOR EACH STATEMENT EXECUTE FUNCTION berth_ledger_append_only();
    CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries
      FOR EACH ROW EXECUTE FUNCTION berth_ledger_append_only();
    CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
      FOR EACH STATEMENT EXECUTE FUNCTION berth_ledger_append_only();
  `);

  // After each statement that inserts entries: every transaction it touched sums to zero, and the cached
  // balances move by exactly the entries (the wallets' CHECK then refuses a crossed floor). A transaction's
  // legs are inserted by one statement; a later statement adding legs must itself balance.
  await knex.raw(`
    CREATE FUNCTION berth_ledger_entries_applied() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE bad bigint;
    BEGIN
      SELECT t.txn_seq INTO bad FROM (SELECT DISTINCT txn_seq FROM new_entries) t
        WHERE (SELECT sum(e.amount) FROM ledger_entries e WHERE e.txn_seq = t.txn_seq) <> 0 LIMIT 1;
      IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'ledger transaction % does not balance', bad USING ERRCODE = '23514';
      END IF;
      UPDATE wallets w SET balance = w.balance + s.delta, last_sequence = greatest(w.last_sequence, s.seq)
        FROM (SELECT wallet_id, sum(amount) AS delta, max(txn_seq) AS seq FROM new_entries GROUP BY wallet_id) s
        WHERE w.id = s.wallet_id AND w.balance IS NOT NULL;
      RETURN NULL;
    END $$;
    CREATE TRIGGER ledger_entries_applied AFTER INSERT ON ledger_entries
      REFERENCING NEW TABLE AS new_entries FOR EACH STATEMENT EXECUTE FUNCTION berth_ledger_entries_applied();
  `);

  await knex.schema.createTable("billing_sessions", (t) => {
    t.text("session_id").primary();
    // The part of a unit not charged yet, as a numerator over 3,600,000 x carry_divisor (the offering's
    // GPU count): always below one unit. The next sample's charge starts from it, so per-millisecond
    // rounding loses nothing over a session's life.
    t.bigInteger("carry").notNullable().defaultTo(0);
    t.bigInteger("carry_divisor").notNullable().defaultTo(1);
    t.bigInteger("charged").notNullable().defaultTo(0);
    t.integer("samples").notNullable().defaultTo(0);
    t.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    "ALTER TABLE billing_sessions ADD CONSTRAINT billing_sessions_carry_range CHECK (carry_divisor >= 1 AND carry >= 0 AND carry < 3600000 * carry_divisor)",
  );

  await knex.schema.createTable("refills", (t) => {
    t.text("id").primary(); // rfl_<20>
    t.text("wallet_id").notNullable().references("id").inTable("wallets");
    t.text("source_wallet_id").notNullable().references("id").inTable("wallets");
    t.text("organization_id");
    t.text("mode").notNullable(); // top_up_to | add
    t.bigInteger("amount").notNullable();
    t.text("period").notNullable(); // daily | weekly | monthly
    t.boolean("enabled").notNullable().defaultTo(true);
    // The first period applied is the one holding this instant; later ones follow, one each.
    t.timestamp("starts_at", { useTz: true }).notNullable();
    t.text("created_by").notNullable();
    t.timestamp("created_at", { useTz: true }).notNullable();
    t.timestamp("updated_at", { useTz: true }).notNullable();
    t.index(["wallet_id"]);
  });
  await knex.raw(`
    ALTER TABLE refills ADD CONSTRAINT refills_mode CHECK (mode IN ('top_up_to', 'add'));
    ALTER TABLE refills ADD CONSTRAINT refills_period CHECK (period IN ('daily', 'weekly', 'monthly'));
    ALTER TABLE refills ADD CONSTRAINT refills_amount_positive CHECK (amount > 0);
  `);
  // One row per (refill, period): the primary key is what makes a refill happen once per period, across
  // worker restarts and two leaders overlapping.
  await knex.schema.createTable("refill_applications", (t) => {
    t.text("refill_id").notNullable().references("id").inTable("refills");
    t.timestamp("period_start", { useTz: true }).notNullable();
    t.bigInteger("txn_seq"); // null when nothing had to move (already topped up, or an empty source)
    t.bigInteger("requested").notNullable();
    t.bigInteger("moved").notNullable();
    t.timestamp("applied_at", { useTz: true }).notNullable();
    t.primary(["refill_id", "period_start"]);
  });

  await knex.schema.createTable("credit_requests", (t) => {
    t.text("id").primary(); // crq_<20>
    t.text("wallet_id").notNullable().references("id").inTable("wallets");
    t.text("organization_id").notNullable();
    t.text("project_id"); // the project whose wallet is asked for (its admins see the request)
    t.text("requester_id").notNullable();
    t.bigInteger("amount").notNullable();
    t.text("reason").notNullable();
    t.text("status").notNullable().defaultTo("pending"); // pending | approved | partially_approved | denied | cancelled
    t.bigInteger("approved_amount");
    t.text("decided_by");
    t.text("decision_note");
    t.bigInteger("txn_seq");
    t.timestamp("created_at", { useTz: true }).notNullable();
    t.timestamp("decided_at", { useTz: true });
    t.index(["organization_id", "created_at"]);
    t.index(["requester_id", "created_at"]);
  });
  await knex.raw(`
    ALTER TABLE credit_requests ADD CONSTRAINT credit_requests_status CHECK (status IN ('pending', 'approved', 'partially_approved', 'denied', 'cancelled'));
    ALTER TABLE credit_requests ADD CONSTRAINT credit_requests_amount_positive CHECK (amount > 0);
  `);

  await knex.schema.createTable("budgets", (t) => {
    t.text("organization_id").primary();
    t.text("period").notNullable(); // daily | weekly | monthly
    t.bigInteger("amount").notNullable();
    t.text("updated_by").notNullable();
    t.timestamp("created_at", { useTz: true }).notNullable();
    t.timestamp("updated_at", { useTz: true }).notNullable();
  });
  await knex.raw(`
    ALTER TABLE budgets ADD CONSTRAINT budgets_period CHECK (period IN ('daily', 'weekly', 'monthly'));
    ALTER TABLE budgets ADD CONSTRAINT budgets_amount_non_negative CHECK (amount >= 0);
  `);

  // The notification bell's store (the /notifications routes read it): billing writes here first.
  await knex.schema.createTable("notifications", (t) => {
    t.bigIncrements("id").primary();
    t.text("user_id").notNullable();
    t.text("organization_id");
    t.text("kind").notNullable(); // e.g. credits.request_approved, credits.running_low, session.paused_no_credits
    t.text("title").notNullable();
    t.text("body").notNullable();
    t.jsonb("data").notNullable().defaultTo("{}");
    t.timestamp("created_at", { useTz: true }).notNullable();
    t.timestamp("read_at", { useTz: true });
    t.index(["user_id", "created_at"]);
  });

  // What the running-out watch already said about a session (warned, paused), so it says it once per
  // episode; the row goes when the session is funded again.
  await knex.schema.createTable("billing_alerts", (t) => {
    t.text("session_id").notNullable();
    t.text("kind").notNullable(); // warned | paused
    t.timestamp("at", { useTz: true }).notNullable();
    t.primary(["session_id", "kind"]);
  });
}
