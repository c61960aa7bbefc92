import type { Knex } from "knex";

// The audit log as an API (docs/dev/governance.md): who acted (user, operator of a cluster, the system and
// its reason), from where, on what (organization, project, cluster, resource), with what outcome
// (success | denied | failed) and a redacted diff. Each row carries `seq` and `hash`, chained over the row
// before it: a BEFORE INSERT trigger takes a transaction-level advisory lock, so rows chain in the order
// their writers got the lock (not in `id` order, which is drawn before the trigger runs). UPDATE is always
// refused; DELETE only inside the retention purge, which sets `berth.audit_purge` for its transaction.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("audit_log", (t) => {
    t.text("actor_reason"); // the system's reason (billing, retention, …)
    t.text("project_id");
    t.text("cluster_id");
    t.text("source_ip");
    t.jsonb("diff");
    t.bigInteger("seq");
    t.text("prev_hash");
    t.text("hash");
  });
  await knex.raw(`
    CREATE FUNCTION berth_audit_row_hash(prev text, r audit_log) RETURNS text LANGUAGE sql IMMUTABLE AS $$
      SELECT encode(sha256(convert_to(coalesce(prev, '') || '|' || jsonb_build_array(
        r.seq, (extract(epoch FROM r.at) * 1000000)::bigint, r.actor_kind, r.actor_id, r.actor_reason,
        r.organization_id, r.project_id, r.cluster_id, r.action, r.target_kind, r.target_id, r.request_id,
        r.source_ip, r.outcome, r.status, r.details, r.diff)::text, 'UTF8')), 'hex')
    $$;

    CREATE FUNCTION berth_audit_chain() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE last audit_log;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext('berth_audit_chain'));
      SELECT * INTO last FROM audit_log WHERE seq IS NOT NULL ORDER BY seq DESC LIMIT 1;
      NEW.seq := coalesce(last.seq, 0) + 1;
      NEW.prev_hash := last.hash;
      NEW.hash := berth_audit_row_hash(last.hash, NEW);
      RETURN NEW;
    END $$;

    CREATE FUNCTION berth_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' AND current_setting('berth.audit_purge', true) = 'on' THEN
        RETURN OLD;
      END IF;
      RAISE EXCEPTION 'audit_log is append-only (% refused)', TG_OP USING ERRCODE = 'P0001';
    END $$;
  `);

  // Rows written before this migration: their outcome in the new words, then chained in id order.
  await knex.raw(`
    UPDATE audit_log SET outcome = CASE WHEN status IN (401, 403) THEN 'denied' ELSE 'failed' END
      WHERE outcome = 'failure';
    UPDATE audit_log SET actor_kind = 'user' WHERE actor_kind = 'anonymous' AND actor_id IS NOT NULL;
  `);
  await knex.raw(`ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only`);
  await knex.raw(`
    DO $$
    DECLARE r audit_log; prev text := NULL; n bigint := 0;
    BEGIN
      FOR r IN SELECT * FROM audit_log ORDER BY id LOOP
        n := n + 1;
        r.seq := n;
        r.prev_hash := prev;
        r.hash := berth_audit_row_hash(prev, r);
        UPDATE audit_log SET seq = r.seq, prev_hash = r.prev_hash, hash = r.hash WHERE id = r.id;
        prev := r.hash;
      END LOOP;
    END $$;
  `);
  await knex.raw(`
    DROP TRIGGER audit_log_append_only ON audit_log;
    ALTER TABLE audit_log ALTER COLUMN seq SET NOT NULL, ALTER COLUMN hash SET NOT NULL;
    ALTER TABLE audit_log ADD CONSTRAINT audit_log_outcome CHECK (outcome IN ('success', 'denied', 'failed'));
    ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_kind
      CHECK (actor_kind IN ('user', 'operator', 'system', 'anonymous'));
    CREATE UNIQUE INDEX audit_log_seq ON audit_log (seq);
    CREATE TRIGGER audit_log_chain BEFORE INSERT ON audit_log
      FOR EACH ROW EXECUTE FUNCTION berth_audit_chain();
    CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
      FOR EACH ROW EXECUTE FUNCTION berth_audit_append_only();
    CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
      FOR EACH STATEMENT EXECUTE FUNCTION berth_audit_append_only();
  `);
  // One index per filter the list is expected to lead with; each ends in seq for the newest-first order.
  await knex.raw(`
    CREATE INDEX audit_log_at_seq ON audit_log (at DESC, seq DESC);
    CREATE INDEX audit_log_org_seq ON audit_log (organization_id, seq DESC);
    CREATE INDEX audit_log_actor_seq ON audit_log (actor_id, seq DESC);
    CREATE INDEX audit_log_action_seq ON audit_log (action text_pattern_ops, seq DESC);
    CREATE INDEX audit_log_target_seq ON audit_log (target_kind, target_id, seq DESC);
    CREATE INDEX audit_log_project_seq ON audit_log (project_id, seq DESC) WHERE project_id IS NOT NULL;
    CREATE INDEX audit_log_cluster_seq ON audit_log (cluster_id, seq DESC) WHERE cluster_id IS NOT NULL;
    CREATE INDEX audit_log_outcome_seq ON audit_log (outcome, seq DESC) WHERE outcome <> 'success';
  `);
}
