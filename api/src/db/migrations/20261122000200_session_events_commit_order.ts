import type { Knex } from "knex";

// Stream ids must grow in commit order: a reader that has delivered seq 3 resumes "after 3", so a seq 2
// committed later would be lost (and clients saw 1, 3, 2). Each insert takes a transaction-scoped
// advisory lock and only then draws its seq, so seqs are handed out in the order transactions commit.
// The column default's draw is overwritten (a gap, which readers do not mind).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION berth_session_events_in_commit_order() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock(7414071210);
      NEW.seq := nextval(pg_get_serial_sequence('session_events', 'seq'));
      RETURN NEW;
    END $$;
    CREATE TRIGGER session_events_commit_order BEFORE INSERT ON session_events
      FOR EACH ROW EXECUTE FUNCTION berth_session_events_in_commit_order();
  `);
}
