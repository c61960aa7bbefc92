import type { Knex } from "knex";
import type { WebhookEndpointRow } from "./types.ts";

export type EndpointChanges = Partial<
  Pick<
    WebhookEndpointRow,
    | "url"
    | "description"
    | "event_types"
    | "enabled"
    | "disabled_reason"
    | "disabled_at"
    | "secret"
    | "previous_secret"
    | "previous_secret_expires_at"
    | "failing_since"
  >
>;

export async function updateEndpoint(
  db: Knex,
  id: string,
  changes: EndpointChanges,
  at: Date,
): Promise<WebhookEndpointRow | undefined> {
  const [row] = (await db("webhook_endpoints")
    .where({ id })
    .update({ ...changes, updated_at: at })
    .returning("*")) as WebhookEndpointRow[];
  return row;
}
