import type { Knex } from "knex";

// Billing reads, for the sessions of a batch, the charged samples that end after the batch's earliest
// start (domain/credits/coverage.ts). By (session, period_end) that read is the few samples it returns; by
// (session, period_start) it was every sample of the session's last hour.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("usage_samples", (t) => {
    t.index(["session", "period_end"], "usage_samples_session_end");
  });
}
