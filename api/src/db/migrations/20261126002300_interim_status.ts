import type { Knex } from "knex";

// The worker keeps a session's interim phases (Starting, Resuming, Pausing, Terminating) off its Session
// resource, to spare the management cluster a write each (docs/dev/sessions.md, "Writes to the management
// cluster"): the history row holds such a status, with the resource status it follows, until the next
// status written to the resource clears it. worker_fence is the fencing token of those records: each new
// leader takes the next term, and a record made under an older term is refused, so a leader that lost
// its lease without knowing cannot place a session its successor sees as waiting.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("sessions", (t) => {
    t.jsonb("interim_status");
  });
  await knex.schema.createTable("worker_fence", (t) => {
    t.smallint("id").primary();
    t.bigInteger("term").notNullable();
  });
}
