// Inventory, the leader's job: watch Nodes and GPU Pods, and keep the control plane's copy of the
// cluster's GPU inventory equal to what computeInventory says — a full PUT at start, after changes
// (debounced) and on a periodic resync, and nothing while nothing changed. Heartbeats never reach the
// wire: the watches' projections drop them, and a computed inventory equal to the last one the control
// plane accepted is not sent.
import {
  errInfo,
  Informer,
  type InformerErrorFields,
  isStatus,
  type KubeApi,
  type KubeObject,
} from "@berth/controllers/kube";
import type { InventoryReport } from "@berth/crds/internal-plane";
import type { Logger } from "pino";
import { type BackoffPolicy, backoffDelay } from "../backoff.ts";
import type { Clock } from "../clock.ts";
import { type InternalClient, type Outcome, retryDelay } from "../controlplane/client.ts";
import type { OperatorMetrics } from "../metrics.ts";
import { computeInventory, inventoryFingerprint, type NodeLike, type PodLike } from "./compute.ts";
import { slimNode, slimPod } from "./slim.ts";

export const INVENTORY_PATH = "/internal/v1/inventory";

export interface InventoryReporterOptions {
  kube: KubeApi;
  internal: InternalClient;
  clusterId: string;
  debounceMs: number;
  resyncMs: number;
  pageSize: number;
  backoff: BackoffPolicy;
  clock: Clock;
  log: Logger;
  metrics: OperatorMetrics;
  /** Checked before every send: a replica that lost the lease must not report. */
  isLeader: () => boolean;
  random?: () => number;
}

/** A wait that ends after a time or when woken, whichever comes first. */
class Waker {
  #wake: (() => void) | undefined;
  #pending = false;
  wait(ms: number): Promise<void> {
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      const self = this;
      function done(): void {
        clearTimeout(timer);
        self.#wake = undefined;
        resolve();
      }
      this.#wake = done;
    });
  }
  wake(): void {
    if (this.#wake) this.#wake();
    else this.#pending = true;
  }
}

export class InventoryReporter {
  readonly #o: InventoryReporterOptions;
  readonly #nodes: Informer<NodeLike>;
  readonly #pods: Informer<PodLike>;
  readonly #waker = new Waker();
  readonly #abort = new AbortController();
  #loop: Promise<void> | undefined;
  /** First and last change since the last computation. */
  #dirtySince: number | undefined;
  #reconciling = false;
  #lastChange = 0;
  #ackedFingerprint: string | undefined;
  #nextResyncAt = 0;
  #failures = 0;
  #retryAt = 0;
  #stopped = false;

  constructor(opts: InventoryReporterOptions) {
    this.#o = opts;
    const random = opts.random ?? Math.random;
    const common = (resource: string) => ({
      kube: opts.kube,
      pageSize: opts.pageSize,
      // A busy cluster's pods do not list within one ordinary request timeout.
      listTimeoutMs: 60_000,
      // Projections are plain JSON; equal JSON is no change (heartbeats, Pending → Running).
      unchanged: (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b),
      onEvent: () => this.#changed(),
      // The first list wakes the loop even when it found nothing to keep.
      onSynced: () => this.#changed(),
      onError: (e: unknown, what: string, fields: InformerErrorFields) =>
        // A 410 is routine (the watch's resourceVersion was compacted away): the relist follows at once.
        opts.log[isStatus(e, 410) ? "info" : "warn"]({ resource, ...fields, error: errInfo(e) }, what),
      onRelist: (reason: string) => opts.metrics.relists.inc({ resource, reason }),
      onWatchingChange: (v: boolean) => opts.metrics.watchSynced.set({ resource }, v ? 1 : 0),
      retryDelay: (failures: number) => backoffDelay(failures, opts.backoff, random),
      random,
    });
    this.#nodes = new Informer<NodeLike>({
      ...common("nodes"),
      path: "/api/v1/nodes",
      parse: (o: KubeObject) => slimNode(o as NodeLike),
    });
    this.#pods = new Informer<PodLike>({
      ...common("pods"),
      path: "/api/v1/pods",
      // Only pods that can hold a device: bound and not finished. A pod that finishes leaves the
      // selection, which the watch reports as DELETED.
      fieldSelector: "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed",
      parse: (o: KubeObject) => slimPod(o as PodLike),
    });
  }

  /**
   * True when the nodes watch is in sync and has no node of this name: deleted, or not shown yet, or not
   * a GPU node (slimNode). Only a hint: the mirror controller asks the apiserver before acting on it.
   */
  nodeGone(name: string): boolean {
    return this.#nodes.watching && !this.#nodes.store.has(name);
  }

  /**
   * The nodes watch has shown every change up to this resourceVersion and whatever it woke is settled:
   * no change waiting to be reported, no report on its way (tests).
   */
  settledPast(resourceVersion: string): boolean {
    return this.#nodes.passed(resourceVersion) && this.#dirtySince === undefined && !this.#reconciling;
  }

  /** Both watches listed and open. */
  get synced(): boolean {
    return this.#nodes.watching && this.#pods.watching;
  }

  start(): void {
    this.#nodes.start();
    this.#pods.start();
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort();
    this.#waker.wake();
    await Promise.all([this.#nodes.stop(), this.#pods.stop(), this.#loop]);
  }

  #changed(): void {
    const now = this.#o.clock.now();
    this.#dirtySince ??= now;
    this.#lastChange = now;
    this.#waker.wake();
  }

  /** Milliseconds until the loop has something to do; 0 = now; undefined = only a change can start it. */
  #due(now: number): number | undefined {
    if (!this.#nodes.synced || !this.#pods.synced) return undefined;
    if (this.#failures > 0) return this.#retryAt - now;
    if (this.#ackedFingerprint === undefined) return 0; // the first report goes out as soon as both listed
    let due = this.#nextResyncAt - now;
    if (this.#dirtySince !== undefined) {
      // Trailing debounce, but never postponed beyond ten quiet periods by a steady trickle.
      const quiet = this.#lastChange + this.#o.debounceMs;
      const cap = this.#dirtySince + 10 * this.#o.debounceMs;
      due = Math.min(due, Math.min(quiet, cap) - now);
    }
    return due;
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      const due = this.#due(this.#o.clock.now());
      if (due === undefined || due > 0) {
        await this.#waker.wait(due ?? 3_600_000);
        continue;
      }
      this.#reconciling = true;
      const acted = await this.#reconcile().finally(() => {
        this.#reconciling = false;
      });
      if (!acted) await this.#waker.wait(Math.max(100, this.#o.debounceMs));
    }
  }

  /** False when it could not act (not the leader right now), so the loop waits instead of spinning. */
  async #reconcile(): Promise<boolean> {
    const now = this.#o.clock.now();
    const resync = this.#ackedFingerprint !== undefined && now >= this.#nextResyncAt;
    this.#dirtySince = undefined;
    const nodes = computeInventory(this.#nodes.store.values(), this.#pods.store.values());
    this.#o.metrics.inventoryNodes.set(nodes.length);
    const fingerprint = inventoryFingerprint(nodes);
    if (fingerprint === this.#ackedFingerprint && !resync && this.#failures === 0) return true;
    if (!this.#o.isLeader()) {
      this.#dirtySince ??= now; // the elector stops us soon; never report in between
      return false;
    }
    const report: InventoryReport = { cluster_id: this.#o.clusterId, observed_at: new Date(now).toISOString(), nodes };
    const key = { kind: "InventoryReport", cluster: this.#o.clusterId };
    const outcome: Outcome = await this.#o.internal.call("PUT", INVENTORY_PATH, report, this.#abort.signal);
    if (this.#stopped) return true;
    const metrics = this.#o.metrics;
    if (outcome.ok) {
      metrics.reports.inc({ report: "inventory", status: String(outcome.status) });
      metrics.lastSuccess.set({ report: "inventory" }, Date.now() / 1000);
      if (this.#failures > 0) this.#o.log.info({ ...key, afterFailures: this.#failures }, "inventory accepted again");
      this.#o.log.debug({ ...key, nodes: nodes.length, resync, answer: outcome.body }, "inventory reported");
      this.#ackedFingerprint = fingerprint;
      this.#failures = 0;
      this.#nextResyncAt = this.#o.clock.now() + this.#o.resyncMs;
      return true;
    }
    metrics.reports.inc({ report: "inventory", status: outcome.status });
    this.#failures++;
    const retryInMs = retryDelay(outcome, this.#failures, this.#o.backoff, this.#o.random);
    this.#retryAt = this.#o.clock.now() + retryInMs;
    const fields = {
      ...key,
      status: outcome.status,
      code: outcome.code,
      reason: outcome.message,
      failures: this.#failures,
      retryInMs,
    };
    switch (outcome.kind) {
      case "unauthorized":
        this.#o.log.warn(
          fields,
          "the control plane refused the operator token (expired or not issued for this cluster); retrying, replace the token file to recover",
        );
        break;
      case "no_token":
        this.#o.log.warn(fields, "no operator token to send; retrying");
        break;
      case "forbidden":
        this.#o.log.error(
          fields,
          "the control plane forbade the inventory report (token of another cluster, or internal plane closed to this address); retrying at the backoff cap",
        );
        break;
      case "rejected":
        this.#o.log.error(fields, "the control plane rejected the inventory report; retrying at the backoff cap");
        break;
      case "unavailable":
        this.#o.log.warn(fields, "the control plane is unreachable or failing; retrying");
        break;
    }
    return true;
  }
}
