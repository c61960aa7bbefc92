import type { Knex } from "knex";

/** The organization's endpoints, counted under a transaction-scoped lock so two creates cannot pass the limit. */
export async function countEndpointsLocked(trx: Knex.Transaction, organizationId: string): Promise<number> {
  await trx.raw("SELECT pg_advisory_xact_lock(hashtext(?))", [`webhook_endpoints:${organizationId}`]);
  const row = (await trx("webhook_endpoints").where({ organization_id: organizationId }).count({ n: "*" }).first()) as {
    n: string;
  };
  return Number(row.n);
}
