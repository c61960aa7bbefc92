import type { Knex } from "knex";

// Clusters' history and what their operators report. The `Cluster` custom resource is the live
// registration; the `clusters` row outlives it (deregistered_at) because ledger and session history name
// cluster ids. Inventory, status reports and usage samples arrive through /internal and stay in Postgres:
// the management cluster is never written per heartbeat.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("clusters", (t) => {
    t.text("id").primary(); // clu_<random>, new on every registration
    t.text("name").notNullable();
    t.text("session_domain").notNullable();
    t.timestamp("registered_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text("registered_by"); // user id
    t.timestamp("deregistered_at", { useTz: true });
    t.text("deregistered_by");
    // The one operator token that is accepted: rotation replaces it, which revokes the previous one.
    t.text("operator_token_jti");
    t.timestamp("operator_token_issued_at", { useTz: true });
    t.timestamp("operator_token_expires_at", { useTz: true });
    // `observed_at` of the last applied inventory snapshot: an older snapshot arriving late is ignored.
    t.timestamp("inventory_observed_at", { useTz: true });
    t.timestamp("last_report_at", { useTz: true });
    t.index(["registered_at"]);
  });
  // A name is taken while its cluster is registered; after deregistration it may be registered again.
  await knex.raw("CREATE UNIQUE INDEX clusters_live_name ON clusters (name) WHERE deregistered_at IS NULL");

  await knex.schema.createTable("cluster_nodes", (t) => {
    t.text("cluster_id").notNullable().references("id").inTable("clusters").onDelete("CASCADE");
    t.text("name").notNullable();
    t.text("gpu_model"); // node label nvidia.com/gpu.product; null when the node has none
    t.integer("gpu_count").notNullable().defaultTo(0);
    t.integer("gpu_allocatable").notNullable().defaultTo(0);
    t.integer("gpu_in_use").notNullable().defaultTo(0);
    t.jsonb("labels").notNullable().defaultTo("{}");
    t.boolean("schedulable").notNullable();
    t.boolean("ready").notNullable();
    t.timestamp("observed_at", { useTz: true }).notNullable();
    t.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(["cluster_id", "name"]);
    t.index(["cluster_id", "gpu_model"]);
  });

  await knex.schema.createTable("gpu_devices", (t) => {
    t.text("cluster_id").notNullable();
    t.text("node_name").notNullable();
    t.integer("index").notNullable();
    t.text("model");
    t.text("uuid");
    t.integer("memory_mib");
    t.primary(["cluster_id", "node_name", "index"]);
    t.foreign(["cluster_id", "node_name"])
      .references(["cluster_id", "name"])
      .inTable("cluster_nodes")
      .onDelete("CASCADE");
  });

  // Cordon, uncordon, drain and delete carried out by the control plane, with what happened.
  await knex.schema.createTable("cluster_node_actions", (t) => {
    t.bigIncrements("id");
    t.text("cluster_id").notNullable();
    t.text("node_name").notNullable();
    t.text("action").notNullable(); // cordon | uncordon | drain | delete
    t.text("actor_id");
    t.timestamp("at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text("outcome").notNullable(); // success | partial | failure
    t.jsonb("result").notNullable().defaultTo("{}");
    t.index(["cluster_id", "node_name", "at"]);
  });

  // The latest status report per session and cluster (the sessions domain turns them into Session status).
  await knex.schema.createTable("session_status_reports", (t) => {
    t.text("cluster_id").notNullable();
    t.text("session").notNullable();
    t.text("phase").notNullable();
    t.text("node");
    t.jsonb("gpu_devices");
    t.text("reason");
    t.text("message");
    t.bigInteger("observed_generation");
    t.timestamp("at", { useTz: true }).notNullable();
    t.timestamp("received_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(["cluster_id", "session"]);
  });

  // Usage samples, deduplicated by (cluster, sample id): the operator retries with the same ids.
  await knex.schema.createTable("usage_samples", (t) => {
    t.text("cluster_id").notNullable();
    t.text("sample_id").notNullable();
    t.text("session").notNullable();
    t.timestamp("period_start", { useTz: true }).notNullable();
    t.timestamp("period_end", { useTz: true }).notNullable();
    t.decimal("gpu_seconds", 14, 3).notNullable();
    t.decimal("gpu_utilization", 6, 3);
    t.integer("gpu_memory_mib");
    t.timestamp("received_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp("billed_at", { useTz: true }); // set by billing when the sample became ledger entries
    t.primary(["cluster_id", "sample_id"]);
    t.index(["session", "period_start"]);
  });
  await knex.raw("CREATE INDEX usage_samples_unbilled ON usage_samples (received_at) WHERE billed_at IS NULL");
}
