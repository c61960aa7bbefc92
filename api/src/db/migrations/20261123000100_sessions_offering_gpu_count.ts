import type { Knex } from "knex";

// hourly_credit_rate is the offering's rate for all of its GPUs. When the offering is gone, billing falls
// back to that recorded rate and needs the offering's GPU count too, or an 8-GPU offering's session is
// charged eight times over. Rows from before have 1, the count billing assumed for them.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("sessions", (t) => {
    t.integer("offering_gpu_count").notNullable().defaultTo(1);
  });
}
