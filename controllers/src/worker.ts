// The worker: the management-cluster controllers behind one leader election (a Lease in the management
// cluster). Any number of replicas may run; one leads, the others wait to take over. Usable in-process
// (tests, the bench, `npm start`) through startWorker; the process wiring (Postgres store, cluster
// credentials) lives with the API (api/src/worker/worker.ts).
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Cluster } from "@berth/crds";
import type { Logger } from "pino";
import type { KubeApi } from "./kube/client.ts";
import { LeaderElector } from "./kube/lease.ts";
import { sleep } from "./kube/sleep.ts";
import { SessionController, type SessionControllerOptions } from "./sessions/controller.ts";
import type { SessionStore } from "./sessions/store.ts";

/** Backoff between attempts to start the controller while leading. */
const START_RETRY_MS = { initialMs: 1_000, maxMs: 30_000 };

export interface WorkerDeps {
  /** The management cluster. */
  kube: KubeApi;
  store: SessionStore;
  /** A registered GPU cluster's client (sessions/controller.ts: asked on every use; the caller owns it). */
  clusterClient(cluster: Cluster): Promise<KubeApi>;
  log: Logger;
  clock?: { now(): Date };
  /** Default: hostname + random suffix. */
  identity?: string;
  lease?: { namespace?: string; name?: string; durationMs?: number; renewDeadlineMs?: number; retryPeriodMs?: number };
  options?: Partial<SessionControllerOptions>;
  /** Other leader-only work (billing's loop): started when this replica leads, stopped when it stops. */
  loops?: LeaderLoop[];
  /** Backoff between attempts to start the controller while leading (default 1 s doubling to 30 s). */
  startRetry?: { initialMs: number; maxMs: number };
}

export interface LeaderLoop {
  start(): void;
  stop(): Promise<void>;
}

export interface RunningWorker {
  readonly identity: string;
  isLeader(): boolean;
  /** The session controller while leading. */
  controller(): SessionController | undefined;
  /** Resolves when this replica leads and its controller has synced. */
  leading(timeoutMs?: number): Promise<SessionController>;
  /** `{ release: false }` leaves the lease to expire, as a crash would. */
  stop(opts?: { release?: boolean }): Promise<void>;
}

export async function startWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const identity = deps.identity ?? `${hostname()}-${randomBytes(4).toString("hex")}`;
  const log = deps.log.child({ component: "worker", identity });
  let controller: SessionController | undefined;
  let starting: Promise<void> = Promise.resolve();
  /** Aborted when the leadership term ends: cancels a pending start retry. */
  let term: AbortController | undefined;
  const retry = deps.startRetry ?? START_RETRY_MS;

  const serially = (step: () => Promise<void>): Promise<void> => {
    starting = starting.then(step).catch((err: unknown) => log.error({ err: String(err) }, "leader transition failed"));
    return starting;
  };

  const elector = new LeaderElector({
    kube: deps.kube,
    namespace: deps.lease?.namespace ?? "berth-system",
    name: deps.lease?.name ?? "berth-worker",
    identity,
    leaseDurationMs: deps.lease?.durationMs ?? 15_000,
    renewDeadlineMs: deps.lease?.renewDeadlineMs ?? 10_000,
    retryPeriodMs: deps.lease?.retryPeriodMs ?? 2_000,
    log,
    // Start and stop are serialized on one chain: a quick lose-then-win never runs two controllers, nor
    // stops the one started after it.
    onStartedLeading: () => {
      log.info({}, "leading: starting the session controller");
      term?.abort();
      const t = new AbortController();
      term = t;
      void serially(async () => {
        // The elector calls this once per term, so a failed start is retried here while the term lasts.
        for (let delayMs = retry.initialMs; !t.signal.aborted; delayMs = Math.min(delayMs * 2, retry.maxMs)) {
          if (elector.isLeader()) {
            const c = new SessionController({
              kube: deps.kube,
              store: deps.store,
              clusterClient: deps.clusterClient,
              log,
              ...(deps.clock ? { clock: deps.clock } : {}),
              ...(deps.options ? { options: deps.options } : {}),
            });
            try {
              await c.start();
              controller = c;
              for (const l of deps.loops ?? []) l.start();
              return;
            } catch (err) {
              log.error({ err: String(err), retryInMs: delayMs }, "the session controller did not start; retrying");
              // A throwing stop must not end the retries.
              await c
                .stop()
                .catch((e: unknown) => log.warn({ err: String(e) }, "stopping the half-started controller"));
            }
          }
          await sleep(delayMs, t.signal);
        }
      });
    },
    onStoppedLeading: () => {
      log.warn({}, "lost the lease: stopping the session controller");
      term?.abort();
      return serially(async () => {
        for (const l of deps.loops ?? []) await l.stop();
        const c = controller;
        controller = undefined;
        await c?.stop();
      });
    },
  });
  elector.start();

  return {
    identity,
    isLeader: () => elector.isLeader(),
    controller: () => controller,
    async leading(timeoutMs = 60_000) {
      const until = Date.now() + timeoutMs;
      while (!controller) {
        if (Date.now() > until) throw new Error(`worker ${identity} did not lead within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return controller;
    },
    async stop(opts = {}) {
      term?.abort();
      await elector.stop(opts);
      await starting;
      for (const l of deps.loops ?? []) await l.stop();
      const c = controller;
      controller = undefined;
      await c?.stop();
    },
  };
}
