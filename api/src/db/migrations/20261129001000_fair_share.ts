import type { Knex } from "knex";

// Fair share (docs/dev/fair-share.md). A session's capacity class and the share of the rate it pays are
// fixed at creation, as its rate is: billing reads them from the row, and the ledger names the class.
// capacity_reclaims is the reclaim log: which guaranteed session took which borrowed session's GPUs,
// why, and when its owner was warned, when it paused and when it ran again.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("sessions", (t) => {
    t.text("capacity_class").notNullable().defaultTo("guaranteed");
    t.integer("rate_permille").notNullable().defaultTo(1000);
  });
  await knex.raw(
    "ALTER TABLE sessions ADD CONSTRAINT sessions_capacity_class_check CHECK (capacity_class IN ('guaranteed', 'borrowed'))",
  );
  await knex.schema.createTable("capacity_reclaims", (t) => {
    t.text("id").primary();
    t.text("session_id").notNullable().references("sessions.id");
    t.text("organization_id").notNullable();
    t.text("project_id");
    t.text("owner_id").notNullable();
    /** The guaranteed session the GPUs went to. */
    t.text("for_session_id").notNullable().references("sessions.id");
    t.text("for_organization_id").notNullable();
    t.text("gpu_model").notNullable();
    t.double("gpus").notNullable();
    t.text("reason").notNullable();
    t.timestamp("noticed_at", { useTz: true }).notNullable();
    t.timestamp("pause_at", { useTz: true }).notNullable();
    t.timestamp("paused_at", { useTz: true });
    t.timestamp("resumed_at", { useTz: true });
    /** A reclaim no longer needed (the guaranteed session went away or found room) before its pause. */
    t.timestamp("withdrawn_at", { useTz: true });
    t.index(["organization_id", "noticed_at"]);
    t.index(["for_organization_id", "noticed_at"]);
  });
  // A reclaim warning is a webhook as idle and time-limit warnings are (migration 20261126000500).
  await knex.raw(`
    CREATE OR REPLACE FUNCTION berth_webhook_from_reclaim_event() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.type NOT IN ('session.idle_warning', 'session.runtime_warning', 'session.reclaim_warning') THEN RETURN NULL; END IF;
      PERFORM berth_webhook_enqueue(NEW.organization_id, NEW.type, NEW.session_id,
        jsonb_build_object(
          'session_id', NEW.session_id, 'organization_id', NEW.organization_id, 'project_id', NEW.project_id,
          'owner_id', NEW.owner_id, 'deadline', NEW.payload -> 'warning' -> 'deadline',
          'minutes_left', NEW.payload -> 'warning' -> 'minutes_left', 'reason', NEW.payload -> 'warning' -> 'reason'),
        NEW.created_at, 'session_events:' || NEW.seq);
      RETURN NULL;
    END $$;
  `);
  await knex.raw(
    "CREATE UNIQUE INDEX capacity_reclaims_open ON capacity_reclaims (session_id) WHERE paused_at IS NULL AND withdrawn_at IS NULL",
  );
}
