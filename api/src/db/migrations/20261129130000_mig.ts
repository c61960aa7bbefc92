import type { Knex } from "knex";

// MIG profiles (docs/dev/gpu-sharing.md).
// - cluster_nodes.mig: per profile, the instances a node advertises and its pods hold (the operator's report).
// - mig_layouts: an administrator's mark that a cluster's nodes of one model, selected by one label
//   requirement, are partitioned so (instances per card); Berth offers a layout's profiles on those nodes
//   only. A change wakes the worker's inventory read, as node pools do.
// - sessions.gpu_mig_profile and the profile's share of a card (an exact fraction: sevenths are not exact in
//   floating point), which quotas and fair share count instead of a whole card.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE cluster_nodes ADD COLUMN mig jsonb;
    CREATE TABLE mig_layouts (
      id text PRIMARY KEY,
      cluster_id text NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
      gpu_model text NOT NULL,
      label_key text NOT NULL,
      label_values text[] NOT NULL,
      profiles jsonb NOT NULL,
      created_by text,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX mig_layouts_cluster ON mig_layouts (cluster_id);
    CREATE TRIGGER mig_layouts_notify AFTER INSERT OR UPDATE OR DELETE ON mig_layouts
      FOR EACH STATEMENT EXECUTE FUNCTION berth_notify_inventory();
    ALTER TABLE sessions ADD COLUMN gpu_mig_profile text;
    ALTER TABLE sessions ADD COLUMN gpu_share_num integer;
    ALTER TABLE sessions ADD COLUMN gpu_share_den integer;
    ALTER TABLE sessions ADD CONSTRAINT sessions_gpu_share CHECK (
      (gpu_share_num IS NULL) = (gpu_share_den IS NULL) AND (gpu_share_den IS NULL OR gpu_share_den > 0));
  `);
}
