import type { Knex } from "knex";
import type { WebhookEndpointRow } from "./types.ts";

export async function findEndpoint(db: Knex, id: string): Promise<WebhookEndpointRow | undefined> {
  return (await db("webhook_endpoints").where({ id }).first()) as WebhookEndpointRow | undefined;
}
