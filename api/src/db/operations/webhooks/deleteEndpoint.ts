import type { Knex } from "knex";

/** Deletes the endpoint; its deliveries and their log go with it (ON DELETE CASCADE). */
export async function deleteEndpoint(db: Knex, id: string): Promise<boolean> {
  return (await db("webhook_endpoints").where({ id }).delete()) > 0;
}
