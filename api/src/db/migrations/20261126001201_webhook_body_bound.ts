import type { Knex } from "knex";

// Webhook bodies stay under 20 KB (issue 19; receivers and proxies cap bodies): the outbox function now
// measures the body it writes. Over 20,000 bytes, every string of `data` longer than 1 KiB (a failure's
// message, a reason) is cut to 1 KiB and `data.truncated` is true; if that is still too long, only the
// scalar fields (the ids, states, amounts) are kept, each string at most 256 characters. The receiver
// fetches the rest from the API by id. Same signature: every trigger keeps calling it.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION berth_webhook_bounded_data(p_data jsonb, p_cut int, p_scalars_only boolean)
    RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
      SELECT coalesce(jsonb_object_agg(k,
               CASE WHEN jsonb_typeof(v) = 'string' AND length(v #>> '{}') > p_cut
                    THEN to_jsonb(left(v #>> '{}', p_cut) || '…') ELSE v END), '{}'::jsonb)
             || jsonb_build_object('truncated', true)
      FROM jsonb_each(p_data) AS e(k, v)
      WHERE NOT p_scalars_only OR jsonb_typeof(v) NOT IN ('object', 'array')
    $$;

    CREATE OR REPLACE FUNCTION berth_webhook_enqueue(p_org text, p_type text, p_key text, p_data jsonb, p_at timestamptz, p_source text)
    RETURNS void LANGUAGE plpgsql AS $$
    DECLARE eid text; body jsonb; ts text;
    BEGIN
      IF p_org IS NULL OR NOT EXISTS (
        SELECT 1 FROM webhook_endpoints
        WHERE organization_id = p_org AND enabled AND (cardinality(event_types) = 0 OR p_type = ANY (event_types))
      ) THEN
        RETURN;
      END IF;
      eid := 'msg_' || replace(gen_random_uuid()::text, '-', '');
      ts := to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
      body := jsonb_build_object('type', p_type, 'timestamp', ts, 'data', p_data);
      IF octet_length(body::text) > 20000 THEN
        body := jsonb_build_object('type', p_type, 'timestamp', ts, 'data', berth_webhook_bounded_data(p_data, 1024, false));
      END IF;
      IF octet_length(body::text) > 20000 THEN
        body := jsonb_build_object('type', p_type, 'timestamp', ts, 'data', berth_webhook_bounded_data(p_data, 256, true));
      END IF;
      INSERT INTO webhook_events (id, organization_id, type, payload, ordering_key, source, created_at)
      VALUES (eid, p_org, p_type, body, p_key, p_source, p_at);
      INSERT INTO webhook_deliveries (event_id, endpoint_id, ordering_key)
      SELECT eid, id, p_key FROM webhook_endpoints
      WHERE organization_id = p_org AND enabled AND (cardinality(event_types) = 0 OR p_type = ANY (event_types));
      PERFORM pg_notify('berth_webhook_outbox', '');
    END $$;
  `);
}
