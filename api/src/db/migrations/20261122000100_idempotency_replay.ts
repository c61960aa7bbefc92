import type { Knex } from "knex";

// Idempotency keys also replay response headers (Location), and carry the lock time that lets a request
// take over a key whose first holder crashed (compare-and-set on locked_at).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("idempotency_keys", (t) => {
    t.jsonb("response_headers");
    t.timestamp("locked_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}
