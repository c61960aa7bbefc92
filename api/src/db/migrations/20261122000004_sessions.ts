import type { Knex } from "knex";

// Sessions' history mirror and their event log. The `Session` custom resource is the source of truth
// while it exists; these rows follow it (the worker updates them on every phase change) so that lists
// page in SQL, policy counts are one query, and history outlives the resource and the cluster it ran on.
//
// `session_events` is the SSE stream's log: one row per change a user may see, in commit order, `seq` is
// the event id clients resume from (Last-Event-ID). A trigger NOTIFYs `berth_session_events` with the
// row's seq, so every API replica LISTENing wakes up at commit and reads the rows it has not sent yet.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("sessions", (t) => {
    t.text("id").primary(); // ses_<20>
    t.text("cr_name").notNullable().unique(); // ses-<20>
    t.text("namespace").notNullable(); // the organization's namespace in the management cluster
    t.text("owner_id").notNullable();
    t.text("organization_id").notNullable();
    t.text("project_id");
    t.text("display_name");
    t.text("offering").notNullable();
    t.text("preset").notNullable();
    t.text("image").notNullable();
    t.text("gpu_model").notNullable();
    t.integer("gpu_count").notNullable();
    // Minor units per hour at creation (billing reads the live offering; this is for history).
    t.text("hourly_credit_rate").notNullable();
    t.text("cluster_pin");
    // The cluster it was last placed on: kept after pause and termination (history, deregistration guard).
    t.text("cluster_id");
    // Every cluster it was ever placed on: their operators may still report its mirror's removal.
    t.specificType("placed_clusters", "text[]").notNullable().defaultTo("{}");
    t.text("node");
    t.text("phase").notNullable().defaultTo("Pending");
    t.text("desired_state").notNullable().defaultTo("Running");
    t.integer("priority").notNullable().defaultTo(0);
    t.integer("queue_position");
    t.text("reason");
    t.text("message");
    // Dispatch bookkeeping (worker): the mirror revision last written and the restarts it carries.
    t.integer("mirror_revision").notNullable().defaultTo(0);
    t.integer("mirror_restarts").notNullable().defaultTo(0);
    t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp("queued_at", { useTz: true });
    t.timestamp("scheduled_at", { useTz: true });
    t.timestamp("started_at", { useTz: true });
    t.timestamp("paused_at", { useTz: true });
    t.timestamp("terminated_at", { useTz: true });
    // The Session resource was deleted (retention over); the row is history only.
    t.timestamp("resource_deleted_at", { useTz: true });
    t.index(["owner_id", "created_at"]);
    t.index(["organization_id", "created_at"]);
    t.index(["project_id", "created_at"]);
    t.index(["created_at"]);
  });
  await knex.raw(`
    CREATE INDEX sessions_live_by_cluster ON sessions (cluster_id) WHERE phase NOT IN ('Terminated', 'Failed');
    CREATE INDEX sessions_live_by_owner ON sessions (owner_id) WHERE phase NOT IN ('Terminated', 'Failed');
    CREATE INDEX sessions_queued ON sessions (gpu_model, priority DESC, queued_at) WHERE phase = 'Queued';
  `);

  await knex.schema.createTable("session_events", (t) => {
    t.bigIncrements("seq").primary();
    t.text("session_id").notNullable();
    t.text("owner_id").notNullable();
    t.text("organization_id").notNullable();
    t.text("project_id");
    t.text("type").notNullable();
    t.jsonb("payload").notNullable();
    t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(["created_at"]);
    t.index(["session_id", "seq"]);
  });
  await knex.raw(`
    CREATE FUNCTION berth_notify_session_event() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('berth_session_events', NEW.seq::text);
      RETURN NULL;
    END $$;
    CREATE TRIGGER session_events_notify AFTER INSERT ON session_events
      FOR EACH ROW EXECUTE FUNCTION berth_notify_session_event();
  `);

  // The worker's wake-up calls: a status report stored (payload: the session id), and the inventory
  // changed (a GPU may have freed up: run placement). Postgres folds identical notifications of one
  // transaction into one.
  await knex.raw(`
    CREATE FUNCTION berth_notify_session_report() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('berth_session_reports', NEW.session);
      RETURN NULL;
    END $$;
    CREATE TRIGGER session_status_reports_notify AFTER INSERT OR UPDATE ON session_status_reports
      FOR EACH ROW EXECUTE FUNCTION berth_notify_session_report();

    CREATE FUNCTION berth_notify_inventory() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('berth_inventory', '');
      RETURN NULL;
    END $$;
    CREATE TRIGGER cluster_nodes_notify AFTER INSERT OR UPDATE OR DELETE ON cluster_nodes
      FOR EACH STATEMENT EXECUTE FUNCTION berth_notify_inventory();
  `);
}
