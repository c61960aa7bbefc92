import type { Knex } from "knex";

// Storage is billed per GB-hour of provisioned size while a volume exists (docs/dev/storage.md):
//   volume_sizes      each size a volume had and from when (create, then every resize): a span that
//                     straddles a resize is priced at each size for its own part.
//   billing_volumes   per volume: how far it has been charged and the remainder below one unit carried to
//                     its next span (as billing_sessions does for sessions), under a row lock.
// storage_reports   each cluster's last capacity report (staleness).
// Delete keeps the data for a grace period the owner can undo within: `purge_after` is when the data
// goes (the worker purges it from the Volume resource's annotation; past it the row is history only).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("volume_sizes", (t) => {
    t.text("volume_id").notNullable().references("volumes.id");
    t.timestamp("from_at", { useTz: true }).notNullable();
    t.integer("size_gb").notNullable();
    t.primary(["volume_id", "from_at"]);
  });
  await knex.schema.createTable("billing_volumes", (t) => {
    t.text("volume_id").primary().references("volumes.id");
    t.timestamp("billed_until", { useTz: true }).notNullable();
    t.bigInteger("carry").notNullable().defaultTo(0);
    t.bigInteger("charged").notNullable().defaultTo(0);
    t.integer("spans").notNullable().defaultTo(0);
    t.timestamp("updated_at", { useTz: true }).notNullable();
  });
  await knex.schema.alterTable("volumes", (t) => {
    t.timestamp("purge_after", { useTz: true });
  });
  // The last storage report of each cluster's operator: a pool's automatic reading is stale when its
  // cluster has not reported for a few ticks (the Pool is written only when the reading changes).
  await knex.schema.createTable("storage_reports", (t) => {
    t.text("cluster_id").primary();
    t.timestamp("observed_at", { useTz: true }).notNullable();
    t.integer("interval_ms");
  });
  await knex.raw(`
    ALTER TABLE billing_volumes ADD CONSTRAINT billing_volumes_carry CHECK (carry >= 0 AND carry < 3600000);
    ALTER TABLE volume_sizes ADD CONSTRAINT volume_sizes_positive CHECK (size_gb > 0);
    INSERT INTO volume_sizes (volume_id, from_at, size_gb) SELECT id, created_at, size_gb FROM volumes;
    INSERT INTO billing_volumes (volume_id, billed_until, updated_at) SELECT id, created_at, now() FROM volumes;
    CREATE INDEX volumes_restorable ON volumes (purge_after) WHERE deleted_at IS NOT NULL;
  `);
}
