import type { Knex } from "knex";

// Webhook events of private images (docs/dev/webhooks.md), written to the outbox by triggers in the
// transaction of the row that records each end, like the session, credit and fleet events:
// - builds: succeeded, failed, cancelled, when an image_builds row leaves queued or running;
// - imports: ready or failed, when an imported private_images row leaves importing (a built image's own
//   row is the build's business: its end is the build's event).
// Ordered per image (`image:<id>`), so a build's end and a later one of the same image arrive in order.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION berth_webhook_from_image_build() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE kind text; img private_images%ROWTYPE;
    BEGIN
      IF OLD.state NOT IN ('queued', 'running') OR NEW.state NOT IN ('succeeded', 'failed', 'cancelled') THEN
        RETURN NULL;
      END IF;
      kind := 'image.build.' || NEW.state;
      SELECT * INTO img FROM private_images WHERE id = NEW.image_id;
      PERFORM berth_webhook_enqueue(NEW.organization_id, kind, 'image:' || NEW.image_id,
        jsonb_build_object(
          'build_id', NEW.id, 'image_id', NEW.image_id, 'organization_id', NEW.organization_id,
          'owner_id', NEW.owner_id, 'state', NEW.state, 'reason', NEW.failure_reason,
          'cluster_id', NEW.cluster_id, 'base_image', NEW.base_image,
          'digest', CASE WHEN NEW.state = 'succeeded' THEN NEW.reported_digest END,
          'name', img.display_name, 'repository', img.repository, 'tag', img.tag,
          'cancel_requested', NEW.cancel_requested,
          'created_at', NEW.created_at, 'started_at', NEW.started_at, 'finished_at', NEW.finished_at),
        coalesce(NEW.finished_at, now()), 'image_builds:' || NEW.id || ':' || NEW.state);
      RETURN NULL;
    END $$;
    CREATE TRIGGER image_builds_webhooks AFTER UPDATE OF state ON image_builds
      FOR EACH ROW EXECUTE FUNCTION berth_webhook_from_image_build();

    CREATE FUNCTION berth_webhook_from_image_import() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE kind text;
    BEGIN
      IF NEW.source <> 'import' OR OLD.state <> 'importing' OR NEW.state NOT IN ('ready', 'failed') THEN
        RETURN NULL;
      END IF;
      kind := 'image.import.' || NEW.state;
      PERFORM berth_webhook_enqueue(NEW.organization_id, kind, 'image:' || NEW.id,
        jsonb_build_object(
          'image_id', NEW.id, 'organization_id', NEW.organization_id, 'owner_id', NEW.owner_id,
          'name', NEW.display_name, 'kind', NEW.kind, 'source_reference', NEW.source_reference,
          'repository', NEW.repository, 'tag', NEW.tag, 'state', NEW.state,
          'digest', NEW.digest, 'size_bytes', NEW.size_bytes::text,
          'failure_code', NEW.failure_code, 'reason', NEW.failure_reason),
        coalesce(NEW.ready_at, NEW.updated_at, now()), 'private_images:' || NEW.id || ':' || NEW.state);
      RETURN NULL;
    END $$;
    CREATE TRIGGER private_images_webhooks AFTER UPDATE OF state ON private_images
      FOR EACH ROW EXECUTE FUNCTION berth_webhook_from_image_import();
  `);
}
