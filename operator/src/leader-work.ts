// The operator's work while it leads (operator.ts elects): started when it wins the lease, stopped when it
// loses it, one transition after another (a quick lose-then-win never runs two reporters). Which parts
// run is leader-plan.ts' decision; each is started here from its configuration:
//   - the inventory (Nodes and GPU Pods) and the storage reports;
//   - the GPU scraper and, when forwarding, the process metrics' round;
//   - the idle rule's activity probe;
//   - the image builds' controller (build clusters);
//   - the session mirrors' controller, last (it reads the others: GPU usage, nodes gone).
import {
  type RunningBuildController,
  type RunningMirrorController,
  type SessionRoutes,
  startImageBuildController,
  startSessionMirrorController,
} from "@berth/controllers";
import { errInfo, type HttpKube } from "@berth/controllers/kube";
import type { Logger } from "pino";
import { ActivityProber } from "./activity/prober.ts";
import type { Clock } from "./clock.ts";
import type { OperatorConfig } from "./config.ts";
import type { InternalClient } from "./controlplane/client.ts";
import { ProcessMetricsRound } from "./forwarding/processRound.ts";
import type { Upstream } from "./gateway/upstream.ts";
import { DcgmScraper } from "./gpu/dcgm.ts";
import { forwardMetrics } from "./gpu/forward.ts";
import { InventoryReporter } from "./inventory/reporter.ts";
import { type LeaderPlan, planLeaderWork } from "./leader-plan.ts";
import type { OperatorMetrics } from "./metrics.ts";
import { ControlPlaneReports } from "./reports.ts";
import type { RoutesFeed } from "./routes.ts";
import { StorageReporter } from "./storage/reporter.ts";

export interface LeaderWorkDeps {
  config: OperatorConfig;
  kube: HttpKube;
  internal: InternalClient;
  clock: Clock;
  log: Logger;
  metrics: OperatorMetrics;
  random?: (() => number) | undefined;
  isLeader(): boolean;
  /** Where each session pod answers: filled by the mirror controller's pod watch. */
  routes: SessionRoutes;
  /** The gateways' feed of `routes`: closed when the lead is lost. */
  feed: Pick<RoutesFeed, "closeAll">;
  /** Where the idle rule reads a session's notebook. */
  apps(cr: string): Upstream | undefined;
}

export class LeaderWork {
  readonly #d: LeaderWorkDeps;
  readonly #plan: LeaderPlan;
  readonly #reports: ControlPlaneReports;
  #transitions: Promise<void> = Promise.resolve();
  #inventory: InventoryReporter | undefined;
  #storage: StorageReporter | undefined;
  // GPU utilisation and memory for the usage samples, scraped only while leading (the meter's lifetime).
  #gpuMetrics: DcgmScraper | undefined;
  // The operator's and every gateway replica's own figures, forwarded while leading (one sender per cluster).
  #processRound: ProcessMetricsRound | undefined;
  // The idle rule's GPU and notebook signals, while leading.
  #activity: ActivityProber | undefined;
  // Image builds: ImageBuild → ConfigMap and Job, the followed log and status to /internal (build clusters).
  #builds: RunningBuildController | undefined;
  // Sessions: SessionMirror → Pod (and the namespace's NetworkPolicy, in place before any session pod),
  // with status reports to /internal.
  #mirrors: RunningMirrorController | undefined;

  constructor(d: LeaderWorkDeps) {
    this.#d = d;
    this.#plan = planLeaderWork(d.config);
    this.#reports = new ControlPlaneReports(d.internal, d.config.clusterId);
  }

  get inventory(): InventoryReporter | undefined {
    return this.#inventory;
  }

  get mirrors(): RunningMirrorController | undefined {
    return this.#mirrors;
  }

  /** Won the lease: starts the parts, unless it was lost again before this transition's turn. */
  lead(): Promise<void> {
    return this.#serially(async () => {
      if (!this.#d.isLeader()) return;
      this.#startReporters();
      this.#startGpuMetrics();
      this.#startProcessRound();
      this.#startActivity();
      this.#startBuilds();
      this.#startMirrors();
    });
  }

  /** Lost the lease (or stopping): stops every part, the GPU scraper last. */
  follow(): Promise<void> {
    return this.#serially(() => this.#stopAll());
  }

  /** Resolves once the transitions asked so far have ended. */
  settled(): Promise<void> {
    return this.#transitions;
  }

  #serially(step: () => Promise<void>): Promise<void> {
    this.#transitions = this.#transitions
      .then(step)
      .catch((e: unknown) => this.#d.log.error({ error: errInfo(e) }, "leader transition failed"));
    return this.#transitions;
  }

  #startReporters(): void {
    const { config, kube, internal, clock, log, metrics, random } = this.#d;
    this.#inventory = new InventoryReporter({
      kube,
      internal,
      clusterId: config.clusterId,
      debounceMs: config.inventory.debounceMs,
      resyncMs: config.inventory.resyncMs,
      pageSize: config.inventory.listPageSize,
      backoff: config.backoff,
      clock,
      log,
      metrics,
      isLeader: () => this.#d.isLeader(),
      ...(random ? { random } : {}),
    });
    this.#inventory.start();
    this.#storage = new StorageReporter({
      kube,
      clusterId: config.clusterId,
      intervalMs: config.storage.intervalMs,
      log,
      send: (report) => this.#reports.storage(report),
    });
    this.#storage.start();
  }

  #startGpuMetrics(): void {
    const { config, internal, log, metrics } = this.#d;
    const urls = this.#plan.gpuUrls;
    if (urls.length === 0) return;
    this.#gpuMetrics = new DcgmScraper({
      urls,
      intervalMs: config.gpuMetrics.intervalMs,
      timeoutMs: config.gpuMetrics.timeoutMs,
      retentionMs: config.gpuMetrics.retentionMs,
      // The meter's clock (the mirror controller runs on wall time): readings and spans must agree.
      now: () => Date.now(),
      onScrape: (result, err) => {
        metrics.gpuScrapes.inc({ result });
        if (result !== "ok") log.debug({ urls, result, error: errInfo(err) }, "GPU metrics scrape failed");
      },
      // Each round goes on to the control plane's metrics server (docs/dev/monitoring.md; the
      // operator's own figures go on the process round); a lost round is a gap, never retried.
      ...(this.#plan.forwardGpuMetrics
        ? {
            onTexts: (texts: string[]) => {
              void forwardMetrics(internal, config.clusterId, texts).then((result) => {
                metrics.forwards.inc({ result });
                // "empty": nothing to send this round, not a failure.
                if (result !== "ok" && result !== "empty") log.debug({ result }, "forwarding GPU metrics failed");
              });
            },
          }
        : {}),
    });
    this.#gpuMetrics.start();
  }

  #startProcessRound(): void {
    if (!this.#plan.processMetrics) return;
    const { config, internal, kube, log, metrics } = this.#d;
    const pm = config.processMetrics;
    this.#processRound = new ProcessMetricsRound({
      clusterId: config.clusterId,
      internal,
      kube,
      own: () => metrics.registry.metrics(),
      ...(pm.gatewaySelector
        ? { gatewayPods: { namespace: pm.gatewayNamespace, selector: pm.gatewaySelector, port: pm.gatewayPort } }
        : {}),
      gatewayUrls: pm.gatewayUrls,
      intervalMs: pm.intervalMs,
      timeoutMs: pm.timeoutMs,
      log,
      onRound: (r) => {
        metrics.forwards.inc({ result: r.result });
        for (const g of r.gateways) metrics.gatewayScrapes.inc({ result: g.ok ? "ok" : "failed" });
        if (r.discovery === "failed") metrics.gatewayScrapes.inc({ result: "discovery_failed" });
        if (r.result !== "ok" && r.result !== "empty")
          log.debug({ result: r.result }, "forwarding the processes' metrics failed");
      },
    });
    this.#processRound.start();
  }

  #startActivity(): void {
    if (!this.#plan.activity) return;
    const { config, kube, internal, clock, log } = this.#d;
    const g = this.#gpuMetrics;
    this.#activity = new ActivityProber({
      kube,
      client: internal,
      clusterId: config.clusterId,
      namespace: config.activity.namespace,
      upstream: this.#d.apps,
      // A reading is fresh for two scrape intervals; older: no reading (the signal turns unknown).
      ...(g ? { gpu: (pod) => g.readings.latest(pod, clock.now() - 2 * config.gpuMetrics.intervalMs) } : {}),
      intervalMs: config.activity.intervalMs,
      probeTimeoutMs: config.activity.probeTimeoutMs,
      clock,
      onReport: (ok, message) => {
        if (!ok) log.warn({ err: message }, "activity report failed; sent again on the next round");
      },
    });
    this.#activity.start();
  }

  #startBuilds(): void {
    const namespace = this.#plan.buildsNamespace;
    if (!namespace) return;
    const { config, kube, log } = this.#d;
    this.#builds = startImageBuildController({
      kube,
      clusterId: config.clusterId,
      namespace,
      ...(config.builds.nodeSelector ? { nodeSelector: config.builds.nodeSelector } : {}),
      log,
      reportStatus: (reports) => this.#reports.buildStatus(reports),
      sendLogs: (build, lines) => this.#reports.buildLogs(build, lines),
    });
  }

  #startMirrors(): void {
    const { config, kube, log, routes } = this.#d;
    const gpuMetrics = this.#gpuMetrics;
    this.#mirrors = startSessionMirrorController({
      kube,
      clusterId: config.clusterId,
      log,
      report: (reports) => this.#reports.sessionStatus(reports),
      reportUsage: (samples) => this.#reports.usage(samples),
      ...(gpuMetrics ? { gpuUsage: gpuMetrics } : {}),
      nodeGone: (name) => this.#inventory?.nodeGone(name) ?? false,
      routes,
      options: {
        usageIntervalMs: config.usage.intervalMs,
        usageGraceMs: config.usage.graceMs,
        egressAllow: config.sessions.egressAllow,
        appReadyTimeoutMs: config.sessions.appReadyTimeoutMs,
      },
    });
  }

  async #stopAll(): Promise<void> {
    const r = this.#inventory;
    this.#inventory = undefined;
    const m = this.#mirrors;
    this.#mirrors = undefined;
    // Another operator's watch is the truth now: the gateways reconnect and find it.
    this.#d.feed.closeAll();
    const g = this.#gpuMetrics;
    this.#gpuMetrics = undefined;
    const st = this.#storage;
    this.#storage = undefined;
    const ac = this.#activity;
    this.#activity = undefined;
    const bu = this.#builds;
    this.#builds = undefined;
    const pr = this.#processRound;
    this.#processRound = undefined;
    await Promise.all([ac?.stop(), pr?.stop()]);
    await bu?.stop();
    await st?.stop();
    try {
      await Promise.all([r?.stop(), m?.stop()]);
    } finally {
      // After the meter (its last flush may still ask for figures), and even when a stop failed.
      await g?.stop();
      this.#d.routes.clear();
    }
  }
}
