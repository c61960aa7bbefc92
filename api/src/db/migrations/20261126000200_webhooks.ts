import type { Knex } from "knex";

// Outbound webhooks per organization (docs/dev/webhooks.md): endpoints, the outbox of events and their
// deliveries, and the delivery log.
//
// The outbox is filled by triggers on the tables whose rows *are* the events (session_events, credit
// requests, refill applications, billing's running-low alerts), so an event exists exactly when the change
// that caused it committed: same transaction, no reader to fall behind or skip. An event is stored only
// when an enabled endpoint of its organization subscribes to its kind; one delivery row per such endpoint.
// A NOTIFY on `berth_webhook_outbox` wakes the dispatcher (api/src/worker/webhooks.ts) at commit.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE webhook_endpoints (
      id text PRIMARY KEY,                       -- whk_<20>
      organization_id text NOT NULL,
      url text NOT NULL,
      description text NOT NULL DEFAULT '',
      event_types text[] NOT NULL DEFAULT '{}',  -- empty: every kind
      enabled boolean NOT NULL DEFAULT true,
      disabled_reason text,                      -- gone (410) | failing (5 days) | manual
      disabled_at timestamptz,
      secret text NOT NULL,                      -- whsec_<base64>; HMAC needs the key itself
      previous_secret text,                      -- still signs until previous_secret_expires_at (rotation)
      previous_secret_expires_at timestamptz,
      failing_since timestamptz,                 -- first failed attempt since the last success
      created_by text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX webhook_endpoints_org ON webhook_endpoints (organization_id, created_at);

    CREATE TABLE webhook_events (
      id text PRIMARY KEY,                       -- msg_<32 hex>: the webhook-id header
      organization_id text NOT NULL,
      type text NOT NULL,
      payload jsonb NOT NULL,                    -- the body: {type, timestamp, data}
      ordering_key text,                         -- deliveries of one key (a session) go out in order
      source text,                               -- the row it came from, e.g. session_events:<seq>
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX webhook_events_created ON webhook_events (created_at);

    CREATE TABLE webhook_deliveries (
      id bigserial PRIMARY KEY,
      event_id text NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
      endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      ordering_key text,
      state text NOT NULL DEFAULT 'pending',     -- pending | succeeded | failed
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      locked_until timestamptz,                  -- a dispatcher's claim; past it, another may take over
      last_attempt_at timestamptz,
      last_status_code integer,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (event_id, endpoint_id),
      CONSTRAINT webhook_deliveries_state CHECK (state IN ('pending', 'succeeded', 'failed'))
    );
    CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
    CREATE INDEX webhook_deliveries_order ON webhook_deliveries (endpoint_id, ordering_key, id) WHERE state = 'pending';
    CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at);

    -- The delivery log: one row per attempt, kept 30 days.
    CREATE TABLE webhook_attempts (
      id bigserial PRIMARY KEY,
      delivery_id bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
      endpoint_id text NOT NULL,
      event_id text NOT NULL,
      attempt integer NOT NULL,
      attempted_at timestamptz NOT NULL,
      outcome text NOT NULL,                     -- succeeded | failed
      status_code integer,
      response_body text,                        -- the first 4 KiB of the answer
      error text,
      latency_ms integer NOT NULL
    );
    CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, attempted_at DESC);
    CREATE INDEX webhook_attempts_at ON webhook_attempts (attempted_at);

    CREATE FUNCTION berth_webhook_enqueue(p_org text, p_type text, p_key text, p_data jsonb, p_at timestamptz, p_source text)
    RETURNS void LANGUAGE plpgsql AS $$
    DECLARE eid text;
    BEGIN
      IF p_org IS NULL OR NOT EXISTS (
        SELECT 1 FROM webhook_endpoints
        WHERE organization_id = p_org AND enabled AND (cardinality(event_types) = 0 OR p_type = ANY (event_types))
      ) THEN
        RETURN;
      END IF;
      eid := 'msg_' || replace(gen_random_uuid()::text, '-', '');
      INSERT INTO webhook_events (id, organization_id, type, payload, ordering_key, source, created_at)
      VALUES (eid, p_org, p_type,
              jsonb_build_object('type', p_type,
                                 'timestamp', to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                                 'data', p_data),
              p_key, p_source, p_at);
      INSERT INTO webhook_deliveries (event_id, endpoint_id, ordering_key)
      SELECT eid, id, p_key FROM webhook_endpoints
      WHERE organization_id = p_org AND enabled AND (cardinality(event_types) = 0 OR p_type = ANY (event_types));
      PERFORM pg_notify('berth_webhook_outbox', '');
    END $$;

    -- Sessions: a phase change in the stream's log is a lifecycle event.
    CREATE FUNCTION berth_webhook_from_session_event() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE v jsonb; phase text; prev text; kind text;
    BEGIN
      v := NEW.payload -> 'view';
      phase := v ->> 'phase';
      prev := NEW.payload ->> 'previous_phase';
      IF NEW.type = 'session.created' THEN
        kind := 'session.created';
      ELSIF NEW.type = 'session.updated' AND prev IS DISTINCT FROM phase THEN
        kind := CASE phase
          WHEN 'Queued' THEN 'session.queued'
          WHEN 'Running' THEN 'session.running'
          WHEN 'Paused' THEN 'session.paused'
          WHEN 'Resuming' THEN 'session.resumed'
          WHEN 'Terminated' THEN 'session.terminated'
          WHEN 'Failed' THEN 'session.failed'
        END;
      END IF;
      IF kind IS NULL THEN RETURN NULL; END IF;
      PERFORM berth_webhook_enqueue(NEW.organization_id, kind, NEW.session_id,
        jsonb_build_object(
          'session_id', NEW.session_id, 'name', v -> 'displayName', 'organization_id', NEW.organization_id,
          'project_id', NEW.project_id, 'owner_id', NEW.owner_id, 'phase', phase, 'previous_phase', prev,
          'desired_state', v -> 'desiredState', 'reason', v -> 'reason', 'message', v -> 'message',
          'cluster_id', v -> 'clusterId', 'node', v -> 'node', 'offering', v -> 'offering',
          'gpu_model', v -> 'gpuModel', 'gpu_count', v -> 'gpuCount', 'image', v -> 'image'),
        NEW.created_at, 'session_events:' || NEW.seq);
      RETURN NULL;
    END $$;
    CREATE TRIGGER session_events_webhooks AFTER INSERT ON session_events
      FOR EACH ROW EXECUTE FUNCTION berth_webhook_from_session_event();

    -- Credits: requests asked and decided, refills applied, sessions running low.
    CREATE FUNCTION berth_webhook_from_credit_request() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE kind text;
    BEGIN
      IF TG_OP = 'INSERT' THEN
        kind := 'credits.request.created';
      ELSIF OLD.status = 'pending' AND NEW.status IN ('approved', 'partially_approved', 'denied') THEN
        kind := 'credits.request.decided';
      ELSE
        RETURN NULL;
      END IF;
      PERFORM berth_webhook_enqueue(NEW.organization_id, kind, 'credit_request:' || NEW.id,
        jsonb_build_object(
          'request_id', NEW.id, 'wallet_id', NEW.wallet_id, 'organization_id', NEW.organization_id,
          'project_id', NEW.project_id, 'requester_id', NEW.requester_id, 'amount', NEW.amount::text,
          'status', NEW.status, 'approved_amount', NEW.approved_amount::text, 'decided_by', NEW.decided_by),
        coalesce(NEW.decided_at, NEW.created_at, now()), 'credit_requests:' || NEW.id || ':' || NEW.status);
      RETURN NULL;
    END $$;
    CREATE TRIGGER credit_requests_webhooks AFTER INSERT OR UPDATE OF status ON credit_requests
      FOR EACH ROW EXECUTE FUNCTION berth_webhook_from_credit_request();

    CREATE FUNCTION berth_webhook_from_refill() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE r refills%ROWTYPE;
    BEGIN
      IF NEW.moved <= 0 THEN RETURN NULL; END IF;
      SELECT * INTO r FROM refills WHERE id = NEW.refill_id;
      PERFORM berth_webhook_enqueue(r.organization_id, 'credits.refill.applied', 'refill:' || r.id,
        jsonb_build_object(
          'refill_id', r.id, 'wallet_id', r.wallet_id, 'source_wallet_id', r.source_wallet_id,
          'organization_id', r.organization_id, 'period_start', NEW.period_start,
          'requested', NEW.requested::text, 'moved', NEW.moved::text),
        NEW.applied_at, 'refill_applications:' || r.id || ':' || NEW.period_start);
      RETURN NULL;
    END $$;
    CREATE TRIGGER refill_applications_webhooks AFTER INSERT ON refill_applications
      FOR EACH ROW EXECUTE FUNCTION berth_webhook_from_refill();

    CREATE FUNCTION berth_webhook_from_billing_alert() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE s sessions%ROWTYPE;
    BEGIN
      IF NEW.kind <> 'warned' THEN RETURN NULL; END IF;
      SELECT * INTO s FROM sessions WHERE id = NEW.session_id;
      IF NOT FOUND THEN RETURN NULL; END IF;
      PERFORM berth_webhook_enqueue(s.organization_id, 'credits.running_low', s.id,
        jsonb_build_object('session_id', s.id, 'organization_id', s.organization_id, 'project_id', s.project_id,
                           'owner_id', s.owner_id),
        NEW.at, 'billing_alerts:' || s.id || ':' || NEW.at);
      RETURN NULL;
    END $$;
    CREATE TRIGGER billing_alerts_webhooks AFTER INSERT ON billing_alerts
      FOR EACH ROW EXECUTE FUNCTION berth_webhook_from_billing_alert();
  `);
}
