import type { Knex } from "knex";
import type { WebhookEndpointRow } from "./types.ts";

export interface NewEndpoint {
  id: string;
  organizationId: string;
  url: string;
  description: string;
  eventTypes: string[];
  secret: string;
  createdBy: string;
  at: Date;
}

export async function insertEndpoint(db: Knex, e: NewEndpoint): Promise<WebhookEndpointRow> {
  const [row] = (await db("webhook_endpoints")
    .insert({
      id: e.id,
      organization_id: e.organizationId,
      url: e.url,
      description: e.description,
      event_types: e.eventTypes,
      secret: e.secret,
      created_by: e.createdBy,
      created_at: e.at,
      updated_at: e.at,
    })
    .returning("*")) as WebhookEndpointRow[];
  return row as WebhookEndpointRow;
}
