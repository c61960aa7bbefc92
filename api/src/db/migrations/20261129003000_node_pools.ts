import type { Knex } from "knex";

// Node pools with grants and hardware-fault cordons (docs/dev/node-pools.md).
// - node_pools: a cluster's nodes whose label `label_key` has one of `label_values`; node_pool_grants: who
//   may use them (an organization or a project). A change of either wakes the worker's inventory read
//   (placement and the pods' node affinity follow it).
// - node_fault_counters: the last value of each fault counter an exporter publishes per card (XIDs by code,
//   ECC double-bit errors), so that an increase is counted once whichever API replica reads it;
//   node_fault_events: one row per fault counted, which the cordon rule reads over its window.
// - A node action's webhook now carries the reason recorded with it (an automatic cordon says why).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE node_pools (
      id text PRIMARY KEY,
      cluster_id text NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      label_key text NOT NULL,
      label_values text[] NOT NULL,
      created_by text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (cluster_id, name)
    );
    CREATE TABLE node_pool_grants (
      id text PRIMARY KEY,
      pool_id text NOT NULL REFERENCES node_pools(id) ON DELETE CASCADE,
      grantee_kind text NOT NULL CHECK (grantee_kind IN ('organization', 'project')),
      grantee_id text NOT NULL,
      created_by text,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (pool_id, grantee_kind, grantee_id)
    );
    CREATE TRIGGER node_pools_notify AFTER INSERT OR UPDATE OR DELETE ON node_pools
      FOR EACH STATEMENT EXECUTE FUNCTION berth_notify_inventory();
    CREATE TRIGGER node_pool_grants_notify AFTER INSERT OR UPDATE OR DELETE ON node_pool_grants
      FOR EACH STATEMENT EXECUTE FUNCTION berth_notify_inventory();

    CREATE TABLE node_fault_counters (
      cluster_id text NOT NULL,
      node_name text NOT NULL,
      gpu_uuid text NOT NULL,
      series text NOT NULL,
      value double precision NOT NULL,
      seen_at timestamptz NOT NULL,
      PRIMARY KEY (cluster_id, node_name, gpu_uuid, series)
    );
    CREATE TABLE node_fault_events (
      id bigserial PRIMARY KEY,
      cluster_id text NOT NULL,
      node_name text NOT NULL,
      gpu_uuid text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('xid', 'ecc_dbe')),
      code integer,
      count integer NOT NULL,
      at timestamptz NOT NULL
    );
    CREATE INDEX node_fault_events_node ON node_fault_events (cluster_id, node_name, at);

    CREATE OR REPLACE FUNCTION berth_webhook_from_node_action() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE kind text;
    BEGIN
      IF NEW.outcome NOT IN ('success', 'partial') THEN RETURN NULL; END IF;
      kind := CASE NEW.action
        WHEN 'cordon' THEN 'node.cordoned'
        WHEN 'uncordon' THEN 'node.uncordoned'
        WHEN 'drain' THEN 'node.drained'
        WHEN 'delete' THEN 'node.deleted'
      END;
      IF kind IS NULL THEN RETURN NULL; END IF;
      PERFORM berth_webhook_enqueue_fleet(kind, 'node:' || NEW.cluster_id || '/' || NEW.node_name,
        jsonb_build_object(
          'cluster_id', NEW.cluster_id, 'node', NEW.node_name, 'action', NEW.action, 'outcome', NEW.outcome,
          'actor_id', NEW.actor_id, 'reason', NEW.result->'reason'),
        NEW.at, 'cluster_node_actions:' || NEW.id);
      RETURN NULL;
    END $$;
  `);
}
