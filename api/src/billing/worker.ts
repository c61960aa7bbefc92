// Billing's loop as the worker runs it (api/src/domain/sessions/worker.ts passes it to startWorker):
// its own management-cluster client (Wallet mirrors, the catalog's offerings, pausing sessions through
// the sessions domain), Postgres, and the clock.
import { HttpKube } from "@berth/controllers/kube";
import type { KubeConfig } from "@kubernetes/client-node";
import type { Knex } from "knex";
import type { Logger } from "pino";
import type { Deps } from "../deps.ts";
import { pauseSession } from "../domain/sessions/pauseSession.ts";
import { makeSessionsRuntime, setSessionsRuntime } from "../domain/sessions/runtime.ts";
import { insertAuditRecord } from "../http/audit.ts";
import type { Principal } from "../http/principal.ts";
import { BillingContext, type BillingOptions, catalogOfferings } from "./context.ts";
import { BillingLoop } from "./loop.ts";
import { WalletMirror } from "./mirror.ts";
import type { PauseSession } from "./runningOut.ts";

/** Who pauses a session out of credits: billing itself, which may act on any session. */
export const BILLING_PRINCIPAL: Principal = {
  userId: "system:billing",
  email: "billing@berth.invalid",
  isSuperAdmin: true,
  mustChangePassword: false,
  memberships: [],
};

export interface BillingWorkerOptions {
  db: Knex;
  kubeConfig: KubeConfig;
  log: Logger;
  clock?: { now(): Date };
  intervalMs?: number;
  options?: Partial<BillingOptions>;
}

/** The sessions domain's pause, with an audit row naming billing as the actor. */
export function pauseThroughSessions(deps: Deps): PauseSession {
  return async (sessionId) => {
    const view = await pauseSession(deps, BILLING_PRINCIPAL, sessionId);
    await insertAuditRecord(deps.db, {
      action: "session.pause",
      actorKind: "system",
      actorId: BILLING_PRINCIPAL.userId,
      organizationId: view.organizationId,
      targetKind: "session",
      targetId: sessionId,
      requestId: `billing:pause:${sessionId}:${deps.clock.now().toISOString()}`,
      outcome: "success",
      status: 200,
      details: { reason: "out of credits" },
      at: deps.clock.now(),
    });
  };
}

export function billingWorkerLoop(o: BillingWorkerOptions): BillingLoop {
  const clock = o.clock ?? { now: () => new Date() };
  const log = o.log.child({ component: "billing" });
  const kube = new HttpKube(o.kubeConfig, { maxSockets: 8, userAgent: "berth-worker-billing" });
  // The sessions domain's functions take Deps; billing's loop uses the part they read.
  const deps = { db: o.db, log, clock, kubeConfig: o.kubeConfig } as unknown as Deps;
  setSessionsRuntime(deps, makeSessionsRuntime(kube));
  const billing = new BillingContext({
    db: o.db,
    clock,
    log,
    offerings: catalogOfferings(deps),
    ...(o.options ? { options: o.options } : {}),
  });
  return new BillingLoop({
    billing,
    pause: pauseThroughSessions(deps),
    mirror: new WalletMirror({ db: o.db, kube, log, clock }),
    ...(o.intervalMs ? { intervalMs: o.intervalMs } : {}),
  });
}
