// The webhook dispatcher as the worker runs it (a leader loop beside billing's; api/src/worker/worker.ts).
// Several replicas would be safe too: claims are row-level (db/operations/webhooks/claimDeliveries.ts).
import type { Knex } from "knex";
import type { Logger } from "pino";
import { type DispatcherOptions, WebhookDispatcher } from "../domain/webhooks/dispatcher.ts";
import { type SecretKey, WebhookSecretBox } from "../domain/webhooks/secretBox.ts";
import { type Resolver, WebhookGuard } from "../domain/webhooks/ssrf.ts";

export interface WebhookWorkerOptions extends Omit<DispatcherOptions, "db" | "log" | "guard" | "secrets"> {
  /** BERTH_WEBHOOK_ALLOW_HOSTS: internal hosts the operator trusts. */
  allowHosts?: readonly string[];
  /** BERTH_WEBHOOK_SECRET_KEYS: the API's keys sealing endpoint secrets (parsed). */
  secretKeys?: readonly SecretKey[];
  resolve?: Resolver;
}

export function webhookWorkerLoop(o: WebhookWorkerOptions & { db: Knex; log: Logger }): WebhookDispatcher {
  const { allowHosts, resolve, log, secretKeys, ...rest } = o;
  return new WebhookDispatcher({
    ...rest,
    secrets: new WebhookSecretBox(secretKeys ?? []),
    log: log.child({ component: "webhooks" }),
    guard: new WebhookGuard({ allowHosts: allowHosts ?? [], ...(resolve ? { resolve } : {}) }),
  });
}
