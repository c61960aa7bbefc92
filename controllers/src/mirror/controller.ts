// The GPU-cluster side: turns each SessionMirror in the sessions namespace into its Pod (the session
// gateway finds the pod through `routes`, no Service per session), keeps the namespace's one
// NetworkPolicy in place before any session pod is created, and reports every change of phase to the
// control plane's internal plane. The operator process runs it while it leads
// (startSessionMirrorController), next to its inventory reporter. Wired from its parts:
//   - observed.ts: what it watches (SessionMirrors, their pods, the managed NetworkPolicies);
//   - report-batcher.ts: the status reports, batched, retried, and sent again on each resync (the
//     control plane's heartbeat of the cluster);
//   - policy-keeper.ts: the namespace's NetworkPolicy, on the queue under its own key;
//   - reconciler.ts: one mirror into its pod (plan.ts decides, the reconciler observes and applies);
//   - usage.ts: the usage meter fed by the pod watch, when the control plane takes usage.
// Level-based: every mirror is looked at again on every resync.
import type { Logger } from "pino";
import type { KubeApi } from "../kube/client.ts";
import { PeriodicPass } from "../kube/periodic.ts";
import { WorkQueue } from "../kube/workqueue.ts";
import { ObservedMirrors } from "./observed.ts";
import {
  DEFAULT_MIRROR_OPTIONS,
  type MirrorControllerOptions,
  type MirrorCounts,
  manifestOptionsOf,
  noMirrorWrites,
  type WireStatusReport,
} from "./options.ts";
import { PolicyKeeper } from "./policy-keeper.ts";
import { MirrorReconciler } from "./reconciler.ts";
import { ReportBatcher } from "./report-batcher.ts";
import type { SessionRoutes } from "./routes.ts";
import { type GpuUsageSource, UsageMeter, type UsageSample } from "./usage.ts";

export {
  DEFAULT_MIRROR_OPTIONS,
  type MirrorControllerOptions,
  type MirrorCounts,
  type WireStatusReport,
} from "./options.ts";

export interface MirrorControllerDeps {
  /** The GPU cluster (the operator's own client fits this interface). */
  kube: KubeApi;
  clusterId: string;
  /** Sends one batch; throws when the control plane did not take it (the batch is retried). */
  report(reports: WireStatusReport[]): Promise<void>;
  /**
   * Sends one batch of usage samples; throws when the control plane did not take it (retried), or
   * `UsageRefused` naming sessions it will never take (dropped). Without it nothing is metered.
   */
  reportUsage?(samples: UsageSample[]): Promise<void>;
  /** GPU utilisation and memory per pod, when the cluster exposes them; samples carry them (mirror/usage.ts). */
  gpuUsage?: GpuUsageSource;
  log: Logger;
  clock?: { now(): Date };
  options?: Partial<MirrorControllerOptions>;
  /**
   * True when the named node may not exist (the operator's node informer, synced, does not have it). A pod
   * being deleted there is forced at once once the apiserver confirms the node is gone (404). Without it,
   * stuck pods are forced only after their grace period.
   */
  nodeGone?(name: string): boolean;
  /** Fed from the pod watch: where each session's application answers (the gateway's table). */
  routes?: SessionRoutes;
}

export interface RunningMirrorController {
  readonly synced: boolean;
  /** Resolves when nothing is queued or waiting to be reported (tests). */
  idle(): Promise<void>;
  readonly counts: MirrorCounts;
  /** The resourceVersion of the namespace's policy the last look found as written (tests). */
  readonly policyAsWritten: string | undefined;
  /** Usage samples sent, batches, failed batches, samples refused for good. */
  readonly usage: { samples: number; batches: number; failedBatches: number; dropped: number };
  /** Resolves when every usage sample due now was acknowledged (tests). */
  usageIdle(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the controller (its watches, its queue, its resync); stop() ends it. */
export function startSessionMirrorController(deps: MirrorControllerDeps): RunningMirrorController {
  const c = new SessionMirrorController(deps);
  c.start();
  return c;
}

export class SessionMirrorController implements RunningMirrorController {
  readonly counts: MirrorCounts = noMirrorWrites();
  readonly usage: RunningMirrorController["usage"];
  readonly #log: Logger;
  readonly #meter: UsageMeter | undefined;
  readonly #observed: ObservedMirrors;
  readonly #policy: PolicyKeeper;
  readonly #reports: ReportBatcher;
  readonly #queue: WorkQueue;
  readonly #resync: PeriodicPass;
  #stopped = false;

  constructor(deps: MirrorControllerDeps) {
    const o = { ...DEFAULT_MIRROR_OPTIONS, ...deps.options };
    const log = deps.log.child({ controller: "session-mirrors", cluster: deps.clusterId });
    this.#log = log;
    const now = () => (deps.clock ?? { now: () => new Date() }).now();
    const ns = o.namespace;
    const manifest = manifestOptionsOf(o);
    const counts = this.counts;
    const send = deps.reportUsage;
    this.#meter = send
      ? new UsageMeter({
          options: { intervalMs: o.usageIntervalMs, graceMs: o.usageGraceMs, batch: o.reportBatch },
          send: (samples) => send(samples),
          now: () => now().getTime(),
          onError: (err, samples) => log.warn({ err: String(err), samples }, "reporting usage failed; retrying"),
          ...(deps.gpuUsage ? { gpu: deps.gpuUsage } : {}),
        })
      : undefined;
    this.usage = this.#meter?.counts ?? { samples: 0, batches: 0, failedBatches: 0, dropped: 0 };
    const enqueue = (key: string) => this.#queue.add(key.includes("/") ? key : `${ns}/${key}`);
    const observed = new ObservedMirrors({
      kube: deps.kube,
      namespace: ns,
      unseenCreateMs: o.unseenCreateMs,
      log,
      ...(this.#meter ? { meter: this.#meter } : {}),
      ...(deps.routes ? { routes: deps.routes } : {}),
      on: {
        mirror: enqueue,
        policy: (e) => (policy.observe(e) ? this.#queue.add(policy.queueKey) : enqueue(e.key)),
      },
    });
    const policy = new PolicyKeeper({
      kube: deps.kube,
      namespace: ns,
      manifest,
      policies: observed.policies,
      counts,
      log,
    });
    const reports = new ReportBatcher({
      send: (batch) => deps.report(batch),
      counts,
      log,
      now,
      debounceMs: o.reportDebounceMs,
      batch: o.reportBatch,
    });
    const reconciler = new MirrorReconciler({
      kube: deps.kube,
      clusterId: deps.clusterId,
      namespace: ns,
      manifest,
      observed,
      policy,
      reports,
      counts,
      log,
      now,
      writeStatus: o.writeStatus,
      ...(deps.nodeGone ? { nodeGone: deps.nodeGone } : {}),
    });
    this.#queue = new WorkQueue({
      concurrency: o.concurrency,
      process: (key) => (key === policy.queueKey ? policy.lookedAt() : reconciler.reconcile(key)),
      onError: (key, err, attempt) => log.warn({ key, attempt, err: String(err) }, "mirror reconcile failed; retrying"),
    });
    this.#resync = new PeriodicPass({
      intervalMs: o.resyncMs,
      pass: async () => this.#resyncPass(),
      onError: (err) => log.warn({ err: String(err) }, "mirror resync failed"),
      immediate: false,
      unref: true,
    });
    this.#observed = observed;
    this.#policy = policy;
    this.#reports = reports;
  }

  get synced(): boolean {
    return this.#observed.synced;
  }

  get policyAsWritten(): string | undefined {
    return this.#policy.asWritten;
  }

  start(): void {
    this.#observed.start();
    // The policy first: created at start, before any mirror asks for a pod.
    this.#queue.add(this.#policy.queueKey);
    this.#resync.start();
    // The first heartbeat as soon as the mirrors are known.
    void this.#observed
      .waitForSync(120_000)
      .then(() => {
        if (!this.#stopped) this.#reports.heartbeat();
      })
      .catch((err: unknown) => this.#log.warn({ err: String(err) }, "watches did not sync yet"));
  }

  async idle(): Promise<void> {
    for (let i = 0; i < 1000; i++) {
      await this.#queue.drained();
      await this.#reports.flushed();
      if (this.#reports.settled && this.#queue.length === 0) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async usageIdle(): Promise<void> {
    await this.#meter?.idle();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#resync.stop();
    await this.#queue.stop();
    await this.#reports.stop();
    await this.#meter?.stop();
    await this.#observed.stop();
  }

  /** Every mirror looked at again, and every state sent again (the heartbeat). */
  #resyncPass(): void {
    if (this.#stopped || !this.#observed.mirrors.synced) return;
    this.#queue.add(this.#policy.queueKey);
    for (const key of this.#observed.mirrors.store.keys()) this.#queue.add(key);
    this.#reports.resendAll();
  }
}
