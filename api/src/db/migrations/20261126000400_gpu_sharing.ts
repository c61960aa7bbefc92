import type { Knex } from "knex";

// GPU sharing (docs/dev/gpu-sharing.md). A node's sharing layer and, per card, what the layer registers
// (cores, vGPU split, health) and what the node's pods hold on it; a session's slice (its offering's
// slices per card, fixed at creation; null: whole cards) and the cards placement chose for it.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("cluster_nodes", (t) => {
    t.text("gpu_sharing"); // "hami"; null: whole cards only
  });
  await knex.schema.alterTable("gpu_devices", (t) => {
    t.integer("cores");
    t.integer("split");
    t.boolean("healthy");
    t.integer("memory_used_mib");
    t.integer("cores_used");
    t.integer("vgpus_used");
  });
  await knex.schema.alterTable("sessions", (t) => {
    t.integer("gpu_slices_per_card");
    t.integer("gpu_slice_memory_mib");
    t.jsonb("gpu_cards"); // card UUIDs the session holds (placement's choice, while it holds them)
  });
}
