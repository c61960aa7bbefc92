// The build cluster's side of image builds (docs/dev/images.md): ImageBuild resources (written by the
// control plane into the builds namespace) become a ConfigMap and a Job (builds/manifests.ts); the Job's
// pod log is followed and sent in batches; what the Job does is reported as levels. Deleting an
// ImageBuild is the cancel: its Job and ConfigMap are deleted (and a Job whose ImageBuild is gone is
// deleted on every resync, should the deletion have happened while no operator was leading). Wired
// from its parts:
//   - observed.ts: what it watches (ImageBuilds, their Jobs and pods);
//   - reconciler.ts: one ImageBuild into its Job, its levels (plan.ts, pure) reported once each;
//   - logs.ts: the build pods' logs, followed and sent in batches.
// Order that the control plane relies on: the last log lines (with the builder's digest line) are sent
// before Succeeded is reported, so the digest is stored when the worker checks the registry.
import type { Logger } from "pino";
import { errInfo } from "../kube/errors.ts";
import { PeriodicPass } from "../kube/periodic.ts";
import { WorkQueue } from "../kube/workqueue.ts";
import { type BuildLogLine, BuildLogs, type StreamingKube } from "./logs.ts";
import { ObservedBuilds } from "./observed.ts";
import type { BuildReport } from "./plan.ts";
import { BuildReconciler } from "./reconciler.ts";

export type { BuildLogLine } from "./logs.ts";
export type { BuildReport } from "./plan.ts";

export interface BuildControllerDeps {
  /** The build cluster (the operator's own client). */
  kube: StreamingKube;
  clusterId: string;
  /** The builds namespace (made by the operator's install). Default `berth-builds`. */
  namespace?: string;
  log: Logger;
  /** Sends status reports; throws when the control plane did not take them (retried). */
  reportStatus(reports: BuildReport[]): Promise<void>;
  /** Sends log lines of one build, in order; throws when the control plane did not take them (retried). */
  sendLogs(buildId: string, lines: BuildLogLine[]): Promise<void>;
  options?: { resyncMs?: number; flushMs?: number };
}

export interface RunningBuildController {
  readonly synced: boolean;
  readonly counts: { jobCreates: number; jobDeletes: number; reports: number; logBatches: number; streams: number };
  stop(): Promise<void>;
}

/** Starts the controller (its watches, its queue, its resync); stop() ends it. */
export function startImageBuildController(deps: BuildControllerDeps): RunningBuildController {
  const c = new ImageBuildController(deps);
  c.start();
  return c;
}

export class ImageBuildController implements RunningBuildController {
  readonly counts = { jobCreates: 0, jobDeletes: 0, reports: 0, logBatches: 0, streams: 0 };
  readonly #observed: ObservedBuilds;
  readonly #logs: BuildLogs;
  readonly #reconciler: BuildReconciler;
  readonly #queue: WorkQueue;
  readonly #resync: PeriodicPass;
  #stopped = false;

  constructor(deps: BuildControllerDeps) {
    const namespace = deps.namespace ?? "berth-builds";
    const log = deps.log.child({ controller: "image-builds", cluster: deps.clusterId });
    this.#observed = new ObservedBuilds({
      kube: deps.kube,
      namespace,
      log,
      onChange: (name) => this.#queue.add(name),
    });
    this.#logs = new BuildLogs({
      kube: deps.kube,
      namespace,
      sendLogs: (id, lines) => deps.sendLogs(id, lines),
      counts: this.counts,
      log,
      flushMs: deps.options?.flushMs ?? 200,
    });
    const reconciler = new BuildReconciler({
      kube: deps.kube,
      clusterId: deps.clusterId,
      namespace,
      observed: this.#observed,
      logs: this.#logs,
      reportStatus: (reports) => deps.reportStatus(reports),
      counts: this.counts,
      log,
      stopped: () => this.#stopped,
    });
    this.#reconciler = reconciler;
    this.#queue = new WorkQueue({
      concurrency: 4,
      process: async (name) => {
        await reconciler.reconcile(name);
        return undefined;
      },
      onError: (key, err, attempt) =>
        log.warn({ build: key, attempt, error: errInfo(err) }, "reconciling an image build failed; retrying"),
    });
    this.#resync = new PeriodicPass({
      intervalMs: deps.options?.resyncMs ?? 30_000,
      pass: async () => this.#resyncPass(),
      onError: (err) => log.warn({ error: errInfo(err) }, "build resync failed"),
      immediate: false,
    });
  }

  get synced(): boolean {
    return this.#observed.synced;
  }

  start(): void {
    this.#observed.start();
    this.#resync.start();
    void this.#observed
      .waitForSync()
      .then(() => {
        for (const name of this.#observed.orphanJobs()) this.#queue.add(name);
      })
      .catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#resync.stop();
    await this.#logs.stop();
    await Promise.all([this.#observed.stop(), this.#queue.stop()]);
    await this.#logs.ended();
  }

  /** Levels again: a report the control plane lost is sent once more; Jobs without their ImageBuild go. */
  #resyncPass(): void {
    this.#reconciler.reported.clear();
    for (const b of this.#observed.builds.store.values()) this.#queue.add(b.metadata.name);
    for (const name of this.#observed.orphanJobs()) this.#queue.add(name);
  }
}
