// The reclaim loop in the worker (controllers/src/worker.ts runs it while leading): every `intervalMs`
// (30 s) one pass of api/src/domain/reclaim/watch.ts. A failing pass is logged and the next one retries
// (every step is level-based: the plan is recomputed from the signals and the status). Tests call `pass()`
// with an injected clock.
import { type KubeApi, PeriodicPass } from "@berth/controllers/kube";
import type { Knex } from "knex";
import type { Logger } from "pino";
import { type PassResult, type ReclaimContext, watchIdleAndRuntime } from "../domain/reclaim/watch.ts";
import { pauseSessionForSystem } from "../domain/sessions/pauseForSystem.ts";
import { makeSessionsRuntime, type SessionsRuntime } from "../domain/sessions/runtime.ts";

export interface ReclaimLoopOptions {
  db: Knex;
  log: Logger;
  sessions: SessionsRuntime;
  clock?: { now(): Date };
  /** Default 30 s. */
  intervalMs?: number;
  staleMs?: number;
}

export class ReclaimLoop {
  readonly #c: ReclaimContext;
  readonly #loop: PeriodicPass;
  passes = 0;

  constructor(o: ReclaimLoopOptions) {
    const clock = o.clock ?? { now: () => new Date() };
    this.#c = {
      db: o.db,
      clock,
      log: o.log.child({ component: "reclaim" }),
      sessions: o.sessions,
      pause: (id, reason) => pauseSessionForSystem({ db: o.db, sessions: o.sessions }, id, reason),
      ...(o.staleMs ? { staleMs: o.staleMs } : {}),
    };
    this.#loop = new PeriodicPass({
      intervalMs: o.intervalMs ?? 30_000,
      pass: () => this.pass(),
      onError: (err) => this.#c.log.warn({ err }, "reclaim pass failed; retried on the next one"),
    });
  }

  start(): void {
    this.#loop.start();
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }

  async pass(): Promise<PassResult> {
    const r = await watchIdleAndRuntime(this.#c);
    this.passes++;
    return r;
  }
}

export function reclaimWorkerLoop(o: {
  db: Knex;
  /** The management cluster's client (the worker's root makes it). */
  kube: KubeApi;
  log: Logger;
  clock?: { now(): Date };
  intervalMs?: number;
  /** How old a source's last report may be for its signal to count as known; default 3 min (signals.ts). */
  staleMs?: number;
}): ReclaimLoop {
  return new ReclaimLoop({
    db: o.db,
    log: o.log,
    sessions: makeSessionsRuntime(o.kube),
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.intervalMs ? { intervalMs: o.intervalMs } : {}),
    ...(o.staleMs ? { staleMs: o.staleMs } : {}),
  });
}
