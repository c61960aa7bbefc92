import type { Knex } from "knex";

// Volume snapshots (docs/dev/storage.md, "Snapshots").
// - volume_snapshots: one row per snapshot; the row is what lists, quotas and billing read. `size_gb` is the
//   source volume's provisioned size when the snapshot was asked for (what it holds against the owner's
//   quota); `restore_size_bytes` is what the driver reported once ready. The owner is the volume's: a
//   snapshot counts where its volume does. `cluster_id` and `k8s_name` say where its VolumeSnapshot lives.
// - volumes.restored_from / restored_at: a volume made from a snapshot, and when its claim bound with the
//   snapshot's data; while restored_at is null the snapshot is being restored and is not deleted.
// - webhooks: volume.snapshot.ready / .failed / .deleted to the volume's organization, by a trigger in the
//   transaction of the worker's write (as volumes' own events, migration 20261126001000_fleet_webhooks.ts).
// - billing_snapshots: how far each snapshot is charged (as billing_volumes), spans on the same grid, from
//   its creation to its deletion or failure.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE volume_snapshots (
      id text PRIMARY KEY,
      volume_id text NOT NULL REFERENCES volumes(id),
      organization_id text NOT NULL,
      owner_kind text NOT NULL CHECK (owner_kind IN ('user', 'project')),
      owner_id text NOT NULL,
      name text NOT NULL,
      pool text NOT NULL,
      size_gb integer NOT NULL CHECK (size_gb > 0),
      state text NOT NULL CHECK (state IN ('creating', 'ready', 'failed', 'deleting')),
      cluster_id text,
      k8s_name text NOT NULL,
      restore_size_bytes bigint,
      failure text,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL,
      ready_at timestamptz,
      failed_at timestamptz,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz
    );
    CREATE UNIQUE INDEX volume_snapshots_name ON volume_snapshots (volume_id, name) WHERE deleted_at IS NULL;
    CREATE INDEX volume_snapshots_owner ON volume_snapshots (owner_kind, owner_id) WHERE deleted_at IS NULL;
    CREATE INDEX volume_snapshots_pending ON volume_snapshots (state) WHERE state IN ('creating', 'deleting');
    ALTER TABLE volumes ADD COLUMN restored_from text REFERENCES volume_snapshots(id);
    ALTER TABLE volumes ADD COLUMN restored_at timestamptz;
    CREATE INDEX volumes_restoring ON volumes (restored_from) WHERE restored_from IS NOT NULL AND restored_at IS NULL;
    CREATE TABLE billing_snapshots (
      snapshot_id text PRIMARY KEY REFERENCES volume_snapshots(id),
      billed_until timestamptz NOT NULL,
      carry bigint NOT NULL DEFAULT 0 CHECK (carry >= 0 AND carry < 3600000),
      charged bigint NOT NULL DEFAULT 0,
      spans integer NOT NULL DEFAULT 0,
      updated_at timestamptz NOT NULL
    );

    CREATE FUNCTION berth_webhook_from_volume_snapshot() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE kind text;
    BEGIN
      IF OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL THEN
        kind := 'volume.snapshot.deleted';
      ELSIF OLD.state <> 'ready' AND NEW.state = 'ready' THEN
        kind := 'volume.snapshot.ready';
      ELSIF OLD.state <> 'failed' AND NEW.state = 'failed' THEN
        kind := 'volume.snapshot.failed';
      ELSE
        RETURN NULL;
      END IF;
      PERFORM berth_webhook_enqueue(NEW.organization_id, kind, 'snapshot:' || NEW.id,
        jsonb_build_object(
          'snapshot_id', NEW.id, 'name', NEW.name, 'volume_id', NEW.volume_id,
          'organization_id', NEW.organization_id, 'owner_kind', NEW.owner_kind, 'owner_id', NEW.owner_id,
          'size_gb', NEW.size_gb, 'failure', NEW.failure),
        NEW.updated_at, 'volume_snapshots:' || NEW.id || ':' || kind);
      RETURN NULL;
    END $$;
    CREATE TRIGGER volume_snapshots_webhooks AFTER UPDATE OF state, deleted_at ON volume_snapshots
      FOR EACH ROW EXECUTE FUNCTION berth_webhook_from_volume_snapshot();
  `);
}
