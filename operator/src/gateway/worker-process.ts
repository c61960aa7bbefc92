// One forked gateway worker as the primary drives it: told to start (and the answer awaited under a
// deadline), asked for its counters, told to stop (SIGKILL past a deadline). workers.ts wires these.
import { type ChildProcess, fork } from "node:child_process";
import { join } from "node:path";
import type { Logger } from "pino";
import type { MetricsJson } from "./metrics.ts";
import type { PreparedGateway } from "./serving.ts";
import type { FromWorker, ToWorker } from "./worker-protocol.ts";

const ENTRY = join(import.meta.dirname, "worker.ts");

/** How long a worker may take to answer a metrics request before a scrape leaves it out. */
const METRICS_TIMEOUT_MS = 2000;

export interface WorkerProcessDeps {
  log?: Logger;
  /** A worker's start (module load and listen) deadline. */
  startTimeoutMs: number;
  /** A worker's stop deadline, then SIGKILL. */
  stopTimeoutMs: number;
}

export class WorkerProcess {
  readonly child: ChildProcess;
  readonly #deps: WorkerProcessDeps;
  #asked = 0;

  constructor(deps: WorkerProcessDeps) {
    this.#deps = deps;
    this.child = fork(ENTRY, [], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      // A debugger port cannot be shared; profiling flags (--cpu-prof) are inherited on purpose.
      execArgv: process.execArgv.filter((a) => !a.startsWith("--inspect")),
    });
    // Could not fork, or a signal could not be sent: its exit (or the start deadline) follows.
    this.child.on("error", (e) => deps.log?.error({ err: e.message }, "gateway worker process error"));
  }

  get pid(): number {
    return this.child.pid as number;
  }

  /** Sends `start` and resolves once the worker listens; rejects (and kills it) when it cannot. */
  start(prepared: PreparedGateway, index: number, port: number): Promise<{ url: string; port: number }> {
    const { child } = this;
    const { startTimeoutMs } = this.#deps;
    return new Promise((resolve, reject) => {
      const fail = (why: string): void => {
        cleanup();
        child.kill("SIGKILL");
        reject(new Error(`gateway worker ${index}: ${why}`));
      };
      const timer = setTimeout(() => fail(`not listening after ${startTimeoutMs} ms`), startTimeoutMs);
      const onMessage = (m: FromWorker): void => {
        if (m.type === "metrics") return;
        if (m.type === "failed") {
          fail(m.message);
          return;
        }
        cleanup();
        resolve({ url: m.url, port: m.port });
      };
      const onExit = (code: number | null, signal: string | null): void => fail(`exited (${signal ?? code})`);
      const cleanup = (): void => {
        clearTimeout(timer);
        child.off("message", onMessage);
        child.off("exit", onExit);
      };
      child.on("message", onMessage);
      child.once("exit", onExit);
      child.send({ type: "start", prepared, port, index } satisfies ToWorker, (e) => {
        if (e) fail(`could not be told to start: ${e.message}`);
      });
    });
  }

  /** Its counters, or undefined when it does not answer in time (busy, restarting). */
  metrics(): Promise<MetricsJson | undefined> {
    const { child } = this;
    if (!child.connected) return Promise.resolve(undefined);
    const id = ++this.#asked;
    return new Promise((resolve) => {
      const done = (v: MetricsJson | undefined): void => {
        clearTimeout(timer);
        child.off("message", onMessage);
        resolve(v);
      };
      const timer = setTimeout(() => done(undefined), METRICS_TIMEOUT_MS);
      const onMessage = (m: FromWorker): void => {
        if (m.type === "metrics" && m.id === id) done(m.data);
      };
      child.on("message", onMessage);
      child.send({ type: "metrics", id } satisfies ToWorker, (e) => {
        if (e) done(undefined);
      });
    });
  }

  /** Resolves once it has exited: told to stop over IPC (SIGTERM without a channel), SIGKILL past the deadline. */
  stop(): Promise<void> {
    const { child } = this;
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const kill = setTimeout(() => child.kill("SIGKILL"), this.#deps.stopTimeoutMs);
      child.once("exit", () => {
        clearTimeout(kill);
        resolve();
      });
      if (child.connected) child.send({ type: "stop" } satisfies ToWorker, () => {});
      else child.kill("SIGTERM");
    });
  }
}
