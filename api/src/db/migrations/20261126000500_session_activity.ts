import type { Knex } from "knex";

// Idle auto-pause (docs/dev/idle-and-limits.md): the activity signals of running sessions as their
// cluster's gateway and operator report them, one row per session (each signal's last activity and when
// it was last observed), and per cluster when each source last reported at all (a silent gateway makes
// every session's traffic signal unknown). The worker's reclaim loop reads both; the warning events get
// webhooks of their own.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE session_activity (
      session_id text PRIMARY KEY,
      cluster_id text NOT NULL,
      user_active_at timestamptz,        -- gateway: the last request or frame a person caused
      notebook_state text,               -- ok | none (no notebook server) | unreachable
      notebook_seen_at timestamptz,      -- operator: the last probe that answered (ok or none)
      notebook_active_at timestamptz,    -- latest kernel or terminal activity; the probe's time while a kernel is busy
      gpu_seen_at timestamptz,           -- operator: the last GPU reading of the session's pod
      gpu_utilization real,
      gpu_active_at timestamptz,         -- the last reading at or above the session's threshold
      updated_at timestamptz NOT NULL
    );
    CREATE TABLE activity_sources (
      cluster_id text NOT NULL,
      source text NOT NULL,              -- gateway | operator
      seen_at timestamptz NOT NULL,
      PRIMARY KEY (cluster_id, source)
    );

    CREATE FUNCTION berth_webhook_from_reclaim_event() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.type NOT IN ('session.idle_warning', 'session.runtime_warning') THEN RETURN NULL; END IF;
      PERFORM berth_webhook_enqueue(NEW.organization_id, NEW.type, NEW.session_id,
        jsonb_build_object(
          'session_id', NEW.session_id, 'organization_id', NEW.organization_id, 'project_id', NEW.project_id,
          'owner_id', NEW.owner_id, 'deadline', NEW.payload -> 'warning' -> 'deadline',
          'minutes_left', NEW.payload -> 'warning' -> 'minutes_left', 'reason', NEW.payload -> 'warning' -> 'reason'),
        NEW.created_at, 'session_events:' || NEW.seq);
      RETURN NULL;
    END $$;
    CREATE TRIGGER session_events_reclaim_webhooks AFTER INSERT ON session_events
      FOR EACH ROW EXECUTE FUNCTION berth_webhook_from_reclaim_event();
  `);
}
