// The fair-share reclaim loop in the worker (docs/dev/fair-share.md): every `intervalMs` (15 s) one pass of
// api/src/domain/fairshare/reclaimPass.ts while the worker leads. Level-based: a failed pass is logged and
// the next one picks up from the sessions' notices. Tests call `pass()` with an injected clock.
import { type KubeApi, PeriodicPass } from "@berth/controllers/kube";
import type { Knex } from "knex";
import type { Logger } from "pino";
import {
  type CapacityReclaimContext,
  type CapacityReclaimResult,
  reclaimCapacity,
} from "../domain/fairshare/reclaimPass.ts";
import { pauseSessionForSystem } from "../domain/sessions/pauseForSystem.ts";
import { makeSessionsRuntime, type SessionsRuntime } from "../domain/sessions/runtime.ts";

export interface CapacityReclaimLoopOptions {
  db: Knex;
  log: Logger;
  sessions: SessionsRuntime;
  clock?: { now(): Date };
  /** Default 15 s. */
  intervalMs?: number;
}

export class CapacityReclaimLoop {
  readonly #c: CapacityReclaimContext;
  readonly #loop: PeriodicPass;
  passes = 0;

  constructor(o: CapacityReclaimLoopOptions) {
    this.#c = {
      db: o.db,
      clock: o.clock ?? { now: () => new Date() },
      log: o.log.child({ component: "capacity-reclaim" }),
      sessions: o.sessions,
      pause: (id, reason) => pauseSessionForSystem({ db: o.db, sessions: o.sessions }, id, reason),
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
}): CapacityReclaimLoop {
  return new CapacityReclaimLoop({
    db: o.db,
    log: o.log,
    sessions: makeSessionsRuntime(o.kube),
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.intervalMs ? { intervalMs: o.intervalMs } : {}),
  });
}
