// Several gateway processes serving one port: one Node thread proxies a few thousand requests per second,
// so a gateway with more CPUs runs a worker per CPU. Each worker listens on the same port with
// SO_REUSEPORT and the kernel spreads new connections among them; nothing passes through this process
// (unlike node:cluster's round robin, where the primary accepts every connection and hands it over).
//
//   this process (primary)  settles the certificate and cookie keys once (run.ts' prepareGateway), forks
//                           worker.ts N times, sends each the same prepared gateway over IPC (never in the
//                           environment or argv), restarts a worker that dies, stops them all on close()
//   worker 0                listens first (on port 0 too: it picks the port the others then join)
//   workers 1..N-1          join its port
//
// A worker whose primary goes away (its IPC channel closes, e.g. the primary was SIGKILLed) stops on its
// own, so no worker outlives the gateway.
import { type ChildProcess, fork } from "node:child_process";
import { join } from "node:path";
import type { Logger } from "pino";
import { type MetricsJson, mergeMetrics, startStatusServer } from "./metrics.ts";
import type { PreparedGateway, ServingGateway } from "./serving.ts";

/** Primary -> worker. */
export type ToWorker =
  | { type: "start"; prepared: PreparedGateway; port: number; index: number }
  | { type: "stop" }
  | { type: "metrics"; id: number };
/** Worker -> primary. */
export type FromWorker =
  | { type: "listening"; url: string; port: number }
  | { type: "failed"; message: string }
  | { type: "metrics"; id: number; data: MetricsJson };

export interface WorkersOptions {
  workers: number;
  log?: Logger;
  /** A worker's start (module load and listen) deadline. Default 60 s. */
  startTimeoutMs?: number;
  /** A worker's stop deadline, then SIGKILL. Default 5 s. */
  stopTimeoutMs?: number;
  /** Delay before a worker that died is replaced. Default 1 s. */
  restartDelayMs?: number;
}

const ENTRY = join(import.meta.dirname, "worker.ts");

export async function startGatewayWorkers(prepared: PreparedGateway, o: WorkersOptions): Promise<ServingGateway> {
  const log = o.log;
  const startTimeoutMs = o.startTimeoutMs ?? 60_000;
  const stopTimeoutMs = o.stopTimeoutMs ?? 5000;
  const restartDelayMs = o.restartDelayMs ?? 1000;
  const children = new Map<number, ChildProcess>();
  const restarts = new Set<NodeJS.Timeout>();
  let closing = false;

  function spawnWorker(): ChildProcess {
    const child = fork(ENTRY, [], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      // A debugger port cannot be shared; profiling flags (--cpu-prof) are inherited on purpose.
      execArgv: process.execArgv.filter((a) => !a.startsWith("--inspect")),
    });
    // Could not fork, or a signal could not be sent: its exit (or the start deadline) follows.
    child.on("error", (e) => log?.error({ err: e.message }, "gateway worker process error"));
    return child;
  }

  /** Sends `start` and resolves once the worker listens; rejects (and kills it) when it cannot. */
  function startWorker(child: ChildProcess, index: number, port: number): Promise<{ url: string; port: number }> {
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

  /**
   * After start-up: a worker that dies is replaced (same index, same port) unless the gateway is closing.
   * A replacement is tracked from its fork, so close() stops it even while it starts, and a replacement
   * that fails to start dies and is tried again the same way.
   */
  function supervise(child: ChildProcess, index: number, port: number): void {
    children.set(index, child);
    child.once("exit", (code, signal) => {
      if (children.get(index) === child) children.delete(index);
      if (closing) return;
      log?.error({ worker: index, pid: child.pid, code, signal }, "gateway worker died; replacing it");
      const t = setTimeout(() => {
        restarts.delete(t);
        if (closing) return;
        const next = spawnWorker();
        supervise(next, index, port);
        startWorker(next, index, port).catch((e: unknown) => {
          if (!closing) log?.error({ worker: index, err: (e as Error).message }, "gateway worker could not start");
        });
      }, restartDelayMs);
      restarts.add(t);
    });
  }

  function stopChild(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const kill = setTimeout(() => child.kill("SIGKILL"), stopTimeoutMs);
      child.once("exit", () => {
        clearTimeout(kill);
        resolve();
      });
      if (child.connected) child.send({ type: "stop" } satisfies ToWorker, () => {});
      else child.kill("SIGTERM");
    });
  }

  // The status port's answer: every live worker's counters, merged. A worker that does not answer within
  // the deadline (busy, restarting) is left out of this round rather than holding the scrape.
  let asked = 0;
  function askMetrics(child: ChildProcess): Promise<MetricsJson | undefined> {
    if (!child.connected) return Promise.resolve(undefined);
    const id = ++asked;
    return new Promise((resolve) => {
      const done = (v: MetricsJson | undefined): void => {
        clearTimeout(timer);
        child.off("message", onMessage);
        resolve(v);
      };
      const timer = setTimeout(() => done(undefined), 2000);
      const onMessage = (m: FromWorker): void => {
        if (m.type === "metrics" && m.id === id) done(m.data);
      };
      child.on("message", onMessage);
      child.send({ type: "metrics", id } satisfies ToWorker, (e) => {
        if (e) done(undefined);
      });
    });
  }
  async function merged(): Promise<string> {
    const parts = await Promise.all([...children.values()].map(askMetrics));
    return mergeMetrics(parts.filter((p): p is MetricsJson => p !== undefined));
  }
  let status: Awaited<ReturnType<typeof startStatusServer>> | undefined;

  async function close(): Promise<void> {
    closing = true;
    await status?.close();
    for (const t of restarts) clearTimeout(t);
    restarts.clear();
    await Promise.all([...children.values()].map(stopChild));
  }

  // Every worker loads its modules at once; worker 0 listens first so that port 0 means one port for all.
  const forked = Array.from({ length: o.workers }, () => spawnWorker());
  try {
    const first = await startWorker(forked[0] as ChildProcess, 0, prepared.config.port);
    supervise(forked[0] as ChildProcess, 0, first.port);
    await Promise.all(
      forked.slice(1).map(async (child, i) => {
        await startWorker(child, i + 1, first.port);
        supervise(child, i + 1, first.port);
      }),
    );
    const pids = (): number[] => [...children.values()].map((c) => c.pid as number);
    const { statusPort, statusHost } = prepared.config;
    if (statusPort !== undefined) status = await startStatusServer(merged, { host: statusHost, port: statusPort });
    log?.info(
      {
        url: first.url,
        clusterId: prepared.config.clusterId,
        tls: Boolean(prepared.tls),
        workers: o.workers,
        pids: pids(),
      },
      "session gateway listening",
    );
    return {
      url: first.url,
      port: first.port,
      ...(status ? { statusUrl: status.url } : {}),
      get pids() {
        return pids();
      },
      close,
    };
  } catch (e) {
    // One worker could not listen (the port is taken, say): none of them stays.
    closing = true;
    await status?.close();
    await Promise.all(forked.map(stopChild));
    throw e;
  }
}
