// The gateway's workers after start-up: who serves which index, a dead worker replaced (same index, same
// port) unless the gateway is closing, and close() stopping every one of them. workers.ts wires it.
import type { Logger } from "pino";
import type { WorkerProcess } from "./worker-process.ts";

export interface WorkerSupervisorDeps {
  log?: Logger;
  /** Forks a fresh worker process. */
  fork: () => WorkerProcess;
  /** Starts a forked worker at an index on a port (rejects when it cannot). */
  start: (worker: WorkerProcess, index: number, port: number) => Promise<unknown>;
  /** Delay before a worker that died is replaced. */
  restartDelayMs: number;
}

export class WorkerSupervisor {
  readonly #deps: WorkerSupervisorDeps;
  readonly #workers = new Map<number, WorkerProcess>();
  readonly #restarts = new Set<NodeJS.Timeout>();
  #closing = false;

  constructor(deps: WorkerSupervisorDeps) {
    this.#deps = deps;
  }

  /** The live workers, by index order of their adding. */
  get workers(): WorkerProcess[] {
    return [...this.#workers.values()];
  }

  /**
   * Keeps `worker` at `index`: when it dies, a replacement is forked after the delay and started on the
   * same port. A replacement is tracked from its fork, so close() stops it even while it starts, and one
   * that fails to start dies and is tried again the same way.
   */
  supervise(worker: WorkerProcess, index: number, port: number): void {
    const { log, restartDelayMs } = this.#deps;
    this.#workers.set(index, worker);
    worker.child.once("exit", (code, signal) => {
      if (this.#workers.get(index) === worker) this.#workers.delete(index);
      if (this.#closing) return;
      log?.error({ worker: index, pid: worker.child.pid, code, signal }, "gateway worker died; replacing it");
      const t = setTimeout(() => {
        this.#restarts.delete(t);
        if (this.#closing) return;
        const next = this.#deps.fork();
        this.supervise(next, index, port);
        this.#deps.start(next, index, port).catch((e: unknown) => {
          if (!this.#closing)
            log?.error({ worker: index, err: (e as Error).message }, "gateway worker could not start");
        });
      }, restartDelayMs);
      this.#restarts.add(t);
    });
  }

  /** Stops replacing workers and stops every one supervised (and `also`, started but not yet supervised). */
  async close(also: WorkerProcess[] = []): Promise<void> {
    this.#closing = true;
    for (const t of this.#restarts) clearTimeout(t);
    this.#restarts.clear();
    await Promise.all([...new Set([...this.#workers.values(), ...also])].map((w) => w.stop()));
  }
}
