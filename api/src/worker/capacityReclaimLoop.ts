// The fair-share reclaim loop in the worker (docs/dev/fair-share.md): every `intervalMs` (15 s) one pass of
// api/src/domain/fairshare/reclaimPass.ts while the worker leads. Level-based: a failed pass is logged and
// the next one picks up from the sessions' notices. Tests call `pass()` with an injected clock.
import { type KubeApi, PeriodicPass } from "@berth/controllers/kube";
import type { Knex } from "knex";
import type { Logger } from "pino";
import { CreditsContext, type CreditsOptions, catalogOfferings } from "../domain/credits/context.ts";
import {
  type CapacityReclaimContext,
  type CapacityReclaimResult,
  reclaimCapacity,
} from "../domain/fairshare/reclaimPass.ts";
import { pauseSessionForSystem } from "../domain/sessions/pauseForSystem.ts";
import { resumeSessionForSystem } from "../domain/sessions/resumeForSystem.ts";
import { makeSessionsRuntime, type SessionsRuntime } from "../domain/sessions/runtime.ts";

export interface CapacityReclaimLoopOptions {
  db: Knex;
  log: Logger;
  sessions: SessionsRuntime;
  clock?: { now(): Date };
  /** Default 15 s. */
  intervalMs?: number;
  /** Billing's options (the minimum run a resume must cover), as the billing loop has them. */
  creditsOptions?: Partial<CreditsOptions>;
}

export class CapacityReclaimLoop {
  readonly #c: CapacityReclaimContext;
  readonly #loop: PeriodicPass;
  passes = 0;

  constructor(o: CapacityReclaimLoopOptions) {
    const clock = o.clock ?? { now: () => new Date() };
    const log = o.log.child({ component: "capacity-reclaim" });
    const credits = new CreditsContext({
      db: o.db,
      clock,
      log,
      offerings: catalogOfferings(o.sessions.catalog),
      ...(o.creditsOptions ? { options: o.creditsOptions } : {}),
    });
    this.#c = {
      db: o.db,
      clock,
      log,
      sessions: o.sessions,
      pause: (id, reason) => pauseSessionForSystem({ db: o.db, sessions: o.sessions }, id, reason),
      resume: async (row, s) =>
        (
          await resumeSessionForSystem({ db: o.db, sessions: o.sessions, credits, clock }, row, s, {
            title: "Reclaimed session not resumed",
            // Once per pause: the pass asks again every interval.
            dedupeKey: `session.resume_refused:${row.id}:${s.status?.pausedAt ?? ""}`,
          })
        ).resumed,
    };
    this.#loop = new PeriodicPass({
      intervalMs: o.intervalMs ?? 15_000,
      pass: () => this.pass(),
      onError: (err) => this.#c.log.warn({ err }, "capacity reclaim pass failed; retried on the next one"),
    });
  }

  start(): void {
    this.#loop.start();
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }

  async pass(): Promise<CapacityReclaimResult> {
    const r = await reclaimCapacity(this.#c);
    this.passes++;
    return r;
  }
}

export function capacityReclaimWorkerLoop(o: {
  db: Knex;
  kube: KubeApi;
  log: Logger;
  clock?: { now(): Date };
  intervalMs?: number;
  creditsOptions?: Partial<CreditsOptions>;
}): CapacityReclaimLoop {
  return new CapacityReclaimLoop({
    db: o.db,
    log: o.log,
    sessions: makeSessionsRuntime(o.kube),
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.intervalMs ? { intervalMs: o.intervalMs } : {}),
    ...(o.creditsOptions ? { creditsOptions: o.creditsOptions } : {}),
  });
}
