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
//
// Wired here from its parts:
//   - worker-protocol.ts: the messages over IPC;
//   - worker-process.ts: one forked worker, started, asked for its counters, stopped, each under a deadline;
//   - worker-supervisor.ts: the workers after start-up, a dead one replaced, all stopped on close;
//   - metrics.ts: the status port, answering with every live worker's counters merged (mergeMetrics, pure).
import type { Logger } from "pino";
import { type MetricsJson, mergeMetrics, startStatusServer } from "./metrics.ts";
import type { PreparedGateway, ServingGateway } from "./serving.ts";
import { WorkerProcess } from "./worker-process.ts";
import { WorkerSupervisor } from "./worker-supervisor.ts";

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

export async function startGatewayWorkers(prepared: PreparedGateway, o: WorkersOptions): Promise<ServingGateway> {
  const { log } = o;
  const processDeps = { log, startTimeoutMs: o.startTimeoutMs ?? 60_000, stopTimeoutMs: o.stopTimeoutMs ?? 5000 };
  const fork = (): WorkerProcess => new WorkerProcess(processDeps);
  const start = (w: WorkerProcess, index: number, port: number) => w.start(prepared, index, port);
  const supervisor = new WorkerSupervisor({ log, fork, start, restartDelayMs: o.restartDelayMs ?? 1000 });

  // The status port's answer: every live worker's counters, merged. A worker that does not answer within
  // the deadline (busy, restarting) is left out of this round rather than holding the scrape.
  const merged = async (): Promise<string> => {
    const parts = await Promise.all(supervisor.workers.map((w) => w.metrics()));
    return mergeMetrics(parts.filter((p): p is MetricsJson => p !== undefined));
  };
  let status: Awaited<ReturnType<typeof startStatusServer>> | undefined;
  const close = async (): Promise<void> => {
    const stopping = supervisor.close(); // no replacement from here on
    await status?.close();
    await stopping;
  };

  // Every worker loads its modules at once; worker 0 listens first so that port 0 means one port for all.
  const forked = Array.from({ length: o.workers }, fork);
  try {
    const [head, ...rest] = forked as [WorkerProcess, ...WorkerProcess[]];
    const first = await start(head, 0, prepared.config.port);
    supervisor.supervise(head, 0, first.port);
    await Promise.all(
      rest.map(async (w, i) => {
        await start(w, i + 1, first.port);
        supervisor.supervise(w, i + 1, first.port);
      }),
    );
    const pids = (): number[] => supervisor.workers.map((w) => w.pid);
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
    const stopping = supervisor.close(forked);
    await status?.close();
    await stopping;
    throw e;
  }
}
