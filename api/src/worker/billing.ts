// Billing's loop as the worker runs it (api/src/worker/worker.ts passes it to the controllers' worker):
// the management-cluster client (Wallet mirrors, the catalog's offerings, pausing sessions through
// the sessions domain), Postgres, and the clock.
import type { KubeApi } from "@berth/controllers/kube";
import type { Knex } from "knex";
import type { Logger } from "pino";
import { insertAuditRecord } from "../db/operations/audit/insertAuditRecord.ts";
import type { Deps } from "../deps.ts";
import { CreditsContext, type CreditsOptions, catalogOfferings } from "../domain/credits/context.ts";
import { WalletMirror } from "../domain/credits/mirror.ts";
import type { PauseSession } from "../domain/credits/runningOut.ts";
import { pauseSessionForSystem } from "../domain/sessions/pauseForSystem.ts";
import { makeSessionsRuntime } from "../domain/sessions/runtime.ts";
import { BillingLoop } from "./billingLoop.ts";

/** The actor billing's own actions are recorded under. */
export const BILLING_ACTOR = "system:billing";

export interface BillingWorkerOptions {
  db: Knex;
  /** The management cluster's client (the worker's root makes it). */
  kube: KubeApi;
  log: Logger;
  clock?: { now(): Date };
  intervalMs?: number;
  options?: Partial<CreditsOptions>;
}

/** The sessions domain's system pause (reason InsufficientCredits), with an audit row naming billing. */
export function pauseThroughSessions(deps: Pick<Deps, "db" | "clock" | "sessions">): PauseSession {
  return async (sessionId) => {
    if (!(await pauseSessionForSystem(deps, sessionId, "InsufficientCredits"))) return false;
    const row = await deps.db("sessions").where({ id: sessionId }).first("organization_id");
    await insertAuditRecord(deps.db, {
      action: "session.pause",
      actorKind: "system",
      actorReason: "billing: out of credits",
      actorId: BILLING_ACTOR,
      organizationId: (row as { organization_id: string } | undefined)?.organization_id ?? null,
      targetKind: "session",
      targetId: sessionId,
      requestId: `billing:pause:${sessionId}:${deps.clock.now().toISOString()}`,
      outcome: "success",
      status: 200,
      details: { reason: "InsufficientCredits" },
      at: deps.clock.now(),
    });
    return true;
  };
}

export function billingWorkerLoop(o: BillingWorkerOptions): BillingLoop {
  const clock = o.clock ?? { now: () => new Date() };
  const log = o.log.child({ component: "billing" });
  const kube = o.kube;
  const sessions = makeSessionsRuntime(kube);
  const billing = new CreditsContext({
    db: o.db,
    clock,
    log,
    offerings: catalogOfferings(sessions.catalog),
    ...(o.options ? { options: o.options } : {}),
  });
  return new BillingLoop({
    billing,
    pause: pauseThroughSessions({ db: o.db, clock, sessions }),
    mirror: new WalletMirror({ db: o.db, kube, log, clock }),
    ...(o.intervalMs ? { intervalMs: o.intervalMs } : {}),
  });
}
