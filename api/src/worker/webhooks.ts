// The webhook dispatcher as the worker runs it (a leader loop beside billing's; api/src/worker/sessions.ts).
// Several replicas would be safe too: claims are row-level (db/operations/webhooks/claimDeliveries.ts).
import type { Knex } from "knex";
import type { Logger } from "pino";
import { type DispatcherOptions, WebhookDispatcher } from "../domain/webhooks/dispatcher.ts";
import { type Resolver, WebhookGuard } from "../domain/webhooks/ssrf.ts";

export interface WebhookWorkerOptions extends Omit<DispatcherOptions, "db" | "log" | "guard"> {
  /** BERTH_WEBHOOK_ALLOW_HOSTS: internal hosts the operator trusts. */
  allowHosts?: readonly string[];
  resolve?: Resolver;
}

export function webhookWorkerLoop(o: WebhookWorkerOptions & { db: Knex; log: Logger }): WebhookDispatcher {
  const { allowHosts, resolve, log, ...rest } = o;
  return new WebhookDispatcher({
    ...rest,
    log: log.child({ component: "webhooks" }),
    guard: new WebhookGuard({ allowHosts: allowHosts ?? [], ...(resolve ? { resolve } : {}) }),
  });
}
