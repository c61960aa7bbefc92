import type { Knex } from "knex";

// Webhook events of volumes, nodes and clusters (docs/dev/webhooks.md), written to the outbox by triggers
// in the transaction of the row that records each change, like the session and credit events:
// - volumes: created, resized (size_gb), deleted (deleted_at set), to the volume's organization;
// - nodes: cordoned, uncordoned, drained, deleted, when the control plane's action succeeded (wholly or in
//   part; cluster_node_actions), to every organization that subscribes: the fleet is shared;
// - clusters: unreachable and reachable again, when the worker's health pass sets or clears
//   clusters.unreachable_since (added here), to every organization that subscribes.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE clusters ADD COLUMN unreachable_since timestamptz;

    -- Fleet events: once per organization that has an enabled endpoint subscribed to the kind.
    CREATE FUNCTION berth_webhook_enqueue_fleet(p_type text, p_key text, p_data jsonb, p_at timestamptz, p_source text)
    RETURNS void LANGUAGE plpgsql AS $$
    DECLARE o text;
    BEGIN
      FOR o IN SELECT DISTINCT organization_id FROM webhook_endpoints
               WHERE enabled AND (cardinality(event_types) = 0 OR p_type = ANY (event_types))
               ORDER BY organization_id
      LOOP
        PERFORM berth_webhook_enqueue(o, p_type, p_key, p_data || jsonb_build_object('organization_id', o), p_at, p_source);
      END LOOP;
    END $$;

    CREATE FUNCTION berth_webhook_from_volume() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE kind text;
    BEGIN
      IF TG_OP = 'INSERT' THEN
        kind := 'volume.created';
      ELSIF OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL THEN
        kind := 'volume.deleted';
      ELSIF NEW.deleted_at IS NULL AND OLD.size_gb <> NEW.size_gb THEN
        kind := 'volume.resized';
      ELSE
        RETURN NULL;
      END IF;
      PERFORM berth_webhook_enqueue(NEW.organization_id, kind, 'volume:' || NEW.id,
        jsonb_build_object(
          'volume_id', NEW.id, 'name', NEW.name, 'organization_id', NEW.organization_id,
          'owner_kind', NEW.owner_kind, 'owner_id', NEW.owner_id, 'size_gb', NEW.size_gb,
          'previous_size_gb', CASE WHEN TG_OP = 'UPDATE' AND OLD.size_gb <> NEW.size_gb THEN OLD.size_gb END,
          'pool', NEW.pool),
        coalesce(NEW.deleted_at, NEW.updated_at, now()),
        'volumes:' || NEW.id || ':' || kind || ':' || coalesce(NEW.updated_at, now()));
      RETURN NULL;
    END $$;
    CREATE TRIGGER volumes_webhooks AFTER INSERT OR UPDATE OF size_gb, deleted_at ON volumes
      FOR EACH ROW EXECUTE FUNCTION berth_webhook_from_volume();

    CREATE FUNCTION berth_webhook_from_node_action() RETURNS trigger LANGUAGE plpgsql AS $$
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
          'actor_id', NEW.actor_id),
        NEW.at, 'cluster_node_actions:' || NEW.id);
      RETURN NULL;
    END $$;
    CREATE TRIGGER cluster_node_actions_webhooks AFTER INSERT ON cluster_node_actions
      FOR EACH ROW EXECUTE FUNCTION berth_webhook_from_node_action();

    CREATE FUNCTION berth_webhook_from_cluster_health() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE kind text;
    BEGIN
      IF OLD.unreachable_since IS NULL AND NEW.unreachable_since IS NOT NULL THEN
        kind := 'cluster.unreachable';
      ELSIF OLD.unreachable_since IS NOT NULL AND NEW.unreachable_since IS NULL THEN
        kind := 'cluster.reachable';
      ELSE
        RETURN NULL;
      END IF;
      PERFORM berth_webhook_enqueue_fleet(kind, 'cluster:' || NEW.id,
        jsonb_build_object(
          'cluster_id', NEW.id, 'name', NEW.name, 'last_report_at', NEW.last_report_at,
          'unreachable_since', coalesce(NEW.unreachable_since, OLD.unreachable_since)),
        now(), 'clusters:' || NEW.id || ':' || kind || ':' || now());
      RETURN NULL;
    END $$;
    CREATE TRIGGER clusters_health_webhooks AFTER UPDATE OF unreachable_since ON clusters
      FOR EACH ROW EXECUTE FUNCTION berth_webhook_from_cluster_health();
  `);
}
