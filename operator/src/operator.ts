// The operator of one GPU cluster, start to stop, in one place:
//   status server (/healthz, /metrics) → leader election on a Lease → while leader: inventory
//   (list+watch Nodes and GPU Pods, full reports to the control plane's internal plane) and session
//   mirrors (SessionMirror → Pod, the sessions namespace's one NetworkPolicy; status reports and usage
//   samples; the gateway's routes to the pods, served at GET /routes).
// Followers keep only the election loop and the status server.
import {
  type RunningBuildController,
  type RunningMirrorController,
  SessionRoutes,
  startImageBuildController,
  startSessionMirrorController,
  startStatusServer,
  UsageRefused,
} from "@berth/controllers";
import { errInfo, HttpKube, LeaderElector, loadKubeConfig } from "@berth/controllers/kube";
import type { BuildLogBatch, BuildStatusReport, StatusReport, UsageBatch } from "@berth/crds/internal-plane";
import type { Logger } from "pino";
import { ActivityProber } from "./activity/prober.ts";
import { type Clock, systemClock } from "./clock.ts";
import type { OperatorConfig } from "./config.ts";
import { InternalClient } from "./controlplane/client.ts";
import { ProcessMetricsRound } from "./forwarding/processRound.ts";
import { parseUpstreamTable } from "./gateway/config.ts";
import { addressMatcher, StaticUpstreams, type Upstream } from "./gateway/upstream.ts";
import { DcgmScraper } from "./gpu/dcgm.ts";
import { forwardMetrics } from "./gpu/forward.ts";
import { InventoryReporter } from "./inventory/reporter.ts";
import { createMetrics, type OperatorMetrics } from "./metrics.ts";
import { routesFeed } from "./routes.ts";
import { StorageReporter } from "./storage/reporter.ts";

export interface StartOperatorOptions {
  log: Logger;
  clock?: Clock;
  /** Source of jitter; tests may fix it. */
  random?: () => number;
}

export interface RunningOperator {
  readonly identity: string;
  /** Base URL of the status server. */
  readonly url: string;
  /** `${url}/healthz`: 200 while a follower, or while leader with both watches synced. */
  readonly healthUrl: string;
  readonly metricsUrl: string;
  readonly metrics: OperatorMetrics;
  isLeader(): boolean;
  /** The inventory reporter while leading (tests). */
  inventory(): InventoryReporter | undefined;
  /** The session mirrors' controller while leading (tests read what it found and wrote). */
  sessionMirrors(): RunningMirrorController | undefined;
  /**
   * Stops everything. By default a leader releases its lease so a follower takes over at once;
   * `{ release: false }` leaves it to expire, as a crash would.
   */
  stop(opts?: { release?: boolean }): Promise<void>;
}

export async function startOperator(config: OperatorConfig, opts: StartOperatorOptions): Promise<RunningOperator> {
  const clock = opts.clock ?? systemClock;
  const identity = config.lease.identity;
  const log = opts.log.child({ cluster: config.clusterId, identity });
  const metrics = createMetrics({ cluster: config.clusterId, identity });
  const kube = new HttpKube(loadKubeConfig(config.kube), {
    requestTimeoutMs: config.requestTimeoutMs,
    userAgent: "berth-operator",
  });
  const internal = new InternalClient({
    baseUrl: config.controlPlaneUrl,
    tokenFile: config.tokenFile,
    timeoutMs: config.requestTimeoutMs,
  });

  let reporter: InventoryReporter | undefined;
  let storage: StorageReporter | undefined;
  // Sessions: SessionMirror → Pod (and the namespace's NetworkPolicy, in place before any session pod),
  // with status reports to /internal.
  let mirrors: RunningMirrorController | undefined;
  // Where each session pod answers, from the mirror controller's pod watch: the gateway's table (GET
  // /routes, served while leading) and the notebook probe's.
  const routes = new SessionRoutes();
  const feed = routesFeed({
    routes,
    ready: () => elector.isLeader() && (mirrors?.synced ?? false),
    tokenFile: config.tokenFile,
  });
  // GPU utilisation and memory for the usage samples, scraped only while leading (the meter's lifetime).
  let gpuMetrics: DcgmScraper | undefined;
  // The idle rule's GPU and notebook signals, while leading.
  let activity: ActivityProber | undefined;
  // Image builds: ImageBuild → ConfigMap and Job, the followed log and status to /internal (build clusters).
  let builds: RunningBuildController | undefined;
  // The operator's and every gateway replica's own figures, forwarded while leading (one sender per cluster).
  let processRound: ProcessMetricsRound | undefined;
  // The idle rule's notebook reads go to the pod's own address, unless a table stands in for the pods
  // (the local fleet); even then, pods in `directCidrs` (its real node's) are read where they run.
  const standins = config.activity.appUpstreams
    ? new StaticUpstreams(parseUpstreamTable(config.activity.appUpstreams))
    : undefined;
  const direct = addressMatcher(config.activity.directCidrs);
  const apps = (cr: string): Upstream | undefined => {
    const route = routes.get(cr);
    return !standins || (route && direct(route.host)) ? route : standins.resolve(cr);
  };
  // Start and stop of leader-only work are serialized: a quick lose-then-win never runs two reporters.
  let transitions: Promise<void> = Promise.resolve();
  const serially = (step: () => Promise<void>): Promise<void> => {
    transitions = transitions
      .then(step)
      .catch((e: unknown) => log.error({ error: errInfo(e) }, "leader transition failed"));
    return transitions;
  };

  const elector = new LeaderElector({
    kube,
    namespace: config.lease.namespace,
    name: config.lease.name,
    identity,
    leaseDurationMs: config.lease.durationMs,
    renewDeadlineMs: config.lease.renewDeadlineMs,
    retryPeriodMs: config.lease.retryPeriodMs,
    clock,
    log,
    ...(opts.random ? { random: opts.random } : {}),
    onStartedLeading: () => {
      metrics.leader.set(1);
      void serially(async () => {
        if (!elector.isLeader()) return;
        reporter = new InventoryReporter({
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
          isLeader: () => elector.isLeader(),
          ...(opts.random ? { random: opts.random } : {}),
        });
        reporter.start();
        storage = new StorageReporter({
          kube,
          clusterId: config.clusterId,
          intervalMs: config.storage.intervalMs,
          log,
          send: async (report) => {
            const r = await internal.call("PUT", "/internal/v1/storage", report);
            if (!r.ok) throw new Error(`storage report ${r.kind} (${r.status}): ${r.message}`);
          },
        });
        storage.start();
        const gpuUrls = [
          ...(config.gpuMetrics.url ? [config.gpuMetrics.url] : []),
          ...config.gpuMetrics.urls,
          ...(config.gpuMetrics.hamiUrl ? [config.gpuMetrics.hamiUrl] : []),
        ];
        if (gpuUrls.length > 0) {
          gpuMetrics = new DcgmScraper({
            urls: gpuUrls,
            intervalMs: config.gpuMetrics.intervalMs,
            timeoutMs: config.gpuMetrics.timeoutMs,
            retentionMs: config.gpuMetrics.retentionMs,
            // The meter's clock (the mirror controller runs on wall time): readings and spans must agree.
            now: () => Date.now(),
            onScrape: (result, err) => {
              metrics.gpuScrapes.inc({ result });
              if (result !== "ok")
                log.debug({ urls: gpuUrls, result, error: errInfo(err) }, "GPU metrics scrape failed");
            },
            // Each round goes on to the control plane's metrics server (docs/dev/monitoring.md; the
            // operator's own figures go on the process round below); a lost round is a gap, never retried.
            ...(config.gpuMetrics.forward
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
          gpuMetrics.start();
        }
        if (config.gpuMetrics.forward) {
          const pm = config.processMetrics;
          processRound = new ProcessMetricsRound({
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
          processRound.start();
        }
        if (config.activity.intervalMs > 0) {
          const g = gpuMetrics;
          activity = new ActivityProber({
            kube,
            client: internal,
            clusterId: config.clusterId,
            namespace: config.activity.namespace,
            upstream: apps,
            // A reading is fresh for two scrape intervals; older: no reading (the signal turns unknown).
            ...(g ? { gpu: (pod) => g.readings.latest(pod, clock.now() - 2 * config.gpuMetrics.intervalMs) } : {}),
            intervalMs: config.activity.intervalMs,
            probeTimeoutMs: config.activity.probeTimeoutMs,
            clock,
            onReport: (ok, message) => {
              if (!ok) log.warn({ err: message }, "activity report failed; sent again on the next round");
            },
          });
          activity.start();
        }
        const buildsNamespace = config.builds.namespace;
        if (buildsNamespace) {
          const send = async (path: string, body: unknown) => {
            const r = await internal.call("POST", path, body);
            if (!r.ok) throw new Error(`${path} ${r.kind} (${r.status}): ${r.message}`);
          };
          builds = startImageBuildController({
            kube,
            clusterId: config.clusterId,
            namespace: buildsNamespace,
            ...(config.builds.nodeSelector ? { nodeSelector: config.builds.nodeSelector } : {}),
            log,
            reportStatus: (reports) =>
              send("/internal/v1/image-builds/status", {
                cluster_id: config.clusterId,
                reports,
              } satisfies BuildStatusReport),
            sendLogs: (build, lines) =>
              send("/internal/v1/image-builds/logs", {
                cluster_id: config.clusterId,
                build,
                lines,
              } satisfies BuildLogBatch),
          });
        }
        mirrors = startSessionMirrorController({
          kube,
          clusterId: config.clusterId,
          log,
          report: async (reports) => {
            const r = await internal.call("POST", "/internal/v1/sessions/status", {
              cluster_id: config.clusterId,
              reports,
            } satisfies StatusReport);
            if (!r.ok) throw new Error(`status report ${r.kind} (${r.status}): ${r.message}`);
          },
          reportUsage: async (samples) => {
            const r = await internal.call("POST", "/internal/v1/usage", {
              cluster_id: config.clusterId,
              samples,
            } satisfies UsageBatch);
            if (r.ok) return;
            const foreign = r.details?.sessions;
            // 403 naming sessions that were never on this cluster: those samples can never land; the rest can.
            if (r.kind === "forbidden" && Array.isArray(foreign) && foreign.length > 0)
              throw new UsageRefused(`usage refused: ${r.message}`, foreign.map(String));
            // 400 naming samples the control plane will never take: dropped by their sessions, or the
            // same batch would be sent for ever and no other usage of this cluster would land.
            const invalid = rejectedSessions(r, samples);
            if (invalid.length > 0) throw new UsageRefused(`usage rejected: ${r.message}`, invalid);
            throw new Error(`usage report ${r.kind} (${r.status}): ${r.message}`);
          },
          ...(gpuMetrics ? { gpuUsage: gpuMetrics } : {}),
          nodeGone: (name) => reporter?.nodeGone(name) ?? false,
          routes,
          options: {
            usageIntervalMs: config.usage.intervalMs,
            usageGraceMs: config.usage.graceMs,
            egressAllow: config.sessions.egressAllow,
            appReadyTimeoutMs: config.sessions.appReadyTimeoutMs,
          },
        });
      });
    },
    onStoppedLeading: () => {
      metrics.leader.set(0);
      return serially(async () => {
        const r = reporter;
        reporter = undefined;
        const m = mirrors;
        mirrors = undefined;
        // Another operator's watch is the truth now: the gateways reconnect and find it.
        feed.closeAll();
        const g = gpuMetrics;
        gpuMetrics = undefined;
        const st = storage;
        storage = undefined;
        const ac = activity;
        activity = undefined;
        const bu = builds;
        builds = undefined;
        const pr = processRound;
        processRound = undefined;
        await Promise.all([ac?.stop(), pr?.stop()]);
        await bu?.stop();
        await st?.stop();
        try {
          await Promise.all([r?.stop(), m?.stop()]);
        } finally {
          // After the meter (its last flush may still ask for figures), and even when a stop failed.
          await g?.stop();
          routes.clear();
        }
      });
    },
  });

  const server = await startStatusServer({
    host: config.http.host,
    port: config.http.port,
    registry: metrics.registry,
    handle: feed.handle,
    health: () => {
      const leader = elector.isLeader();
      const synced = reporter?.synced ?? false;
      return {
        ok: !leader || synced,
        role: leader ? "leader" : "follower",
        cluster: config.clusterId,
        identity,
        watchesSynced: synced,
      };
    },
  });
  elector.start();
  log.info(
    {
      lease: `${config.lease.namespace}/${config.lease.name}`,
      controlPlane: config.controlPlaneUrl,
      status: server.url,
    },
    "operator started",
  );

  let stopping: Promise<void> | undefined;
  return {
    identity,
    url: server.url,
    healthUrl: `${server.url}/healthz`,
    metricsUrl: `${server.url}/metrics`,
    metrics,
    isLeader: () => elector.isLeader(),
    inventory: () => reporter,
    sessionMirrors: () => mirrors,
    stop: (stopOpts = {}) =>
      (stopping ??= (async () => {
        await elector.stop(stopOpts);
        await transitions;
        kube.close();
        feed.closeAll();
        await server.close();
        log.info({}, "operator stopped");
      })()),
  };
}

/** Sessions of the samples a validation refusal points at (`details.issues[].path`: body, samples, i, …). */
export function rejectedSessions(
  r: { kind: string; code?: string; details?: Record<string, unknown> },
  samples: readonly { session: string }[],
): string[] {
  if (r.kind !== "rejected" || r.code !== "validation_failed") return [];
  const issues = Array.isArray(r.details?.issues) ? (r.details.issues as { path?: unknown }[]) : [];
  const out = new Set<string>();
  for (const i of issues) {
    const path = Array.isArray(i.path) ? i.path : [];
    const at = path.indexOf("samples");
    const index = at >= 0 ? path[at + 1] : undefined;
    const session = typeof index === "number" ? samples[index]?.session : undefined;
    if (session) out.add(session);
  }
  return [...out];
}
