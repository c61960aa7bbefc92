// The operator of one GPU cluster, start to stop, in one place:
//   status server (/healthz, /metrics) → leader election on a Lease → while leader: inventory
//   (list+watch Nodes and GPU Pods, full reports to the control plane's internal plane) and session
//   mirrors (SessionMirror → Pod, the sessions namespace's one NetworkPolicy; status reports and usage
//   samples; the gateway's routes to the pods, served at GET /routes).
// Followers keep only the election loop and the status server. Wired here from its parts:
//   - leader-work.ts: the leader's parts, started and stopped one transition at a time (which ones run:
//     leader-plan.ts, a pure reading of the configuration);
//   - reports.ts: what the leader sends the control plane, and the refusals never sent again;
//   - routes.ts: the gateways' feed of where each session pod answers;
//   - operator-options.ts: what startOperator takes and hands back.
import { SessionRoutes, startStatusServer } from "@berth/controllers";
import { HttpKube, LeaderElector, loadKubeConfig } from "@berth/controllers/kube";
import { systemClock } from "./clock.ts";
import type { OperatorConfig } from "./config.ts";
import { InternalClient } from "./controlplane/client.ts";
import { parseUpstreamTable } from "./gateway/config.ts";
import { addressMatcher, StaticUpstreams, type Upstream } from "./gateway/upstream.ts";
import { LeaderWork } from "./leader-work.ts";
import { createMetrics } from "./metrics.ts";
import type { RunningOperator, StartOperatorOptions } from "./operator-options.ts";
import { routesFeed } from "./routes.ts";

export type { RunningOperator, StartOperatorOptions } from "./operator-options.ts";
export { rejectedSessions } from "./reports.ts";

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
  // Where each session pod answers, from the mirror controller's pod watch: the gateway's table (GET
  // /routes, served while leading) and the notebook probe's.
  const routes = new SessionRoutes();
  const feed = routesFeed({
    routes,
    ready: () => elector.isLeader() && (work.mirrors?.synced ?? false),
    tokenFile: config.tokenFile,
  });
  const work = new LeaderWork({
    config,
    kube,
    internal,
    clock,
    log,
    metrics,
    random: opts.random,
    isLeader: () => elector.isLeader(),
    routes,
    feed,
    apps: sessionApps(routes, config.activity),
  });

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
      void work.lead();
    },
    onStoppedLeading: () => {
      metrics.leader.set(0);
      return work.follow();
    },
  });

  const server = await startStatusServer({
    host: config.http.host,
    port: config.http.port,
    registry: metrics.registry,
    handle: feed.handle,
    health: () => {
      const leader = elector.isLeader();
      const synced = work.inventory?.synced ?? false;
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
    inventory: () => work.inventory,
    sessionMirrors: () => work.mirrors,
    stop: (stopOpts = {}) =>
      (stopping ??= (async () => {
        await elector.stop(stopOpts);
        await work.settled();
        kube.close();
        feed.closeAll();
        await server.close();
        log.info({}, "operator stopped");
      })()),
  };
}

/**
 * The idle rule's notebook reads go to the pod's own address, unless a table stands in for the pods
 * (the local fleet); even then, pods in `directCidrs` (its real node's) are read where they run.
 */
function sessionApps(
  routes: SessionRoutes,
  activity: OperatorConfig["activity"],
): (cr: string) => Upstream | undefined {
  const standins = activity.appUpstreams ? new StaticUpstreams(parseUpstreamTable(activity.appUpstreams)) : undefined;
  const direct = addressMatcher(activity.directCidrs);
  return (cr) => {
    const route = routes.get(cr);
    return !standins || (route && direct(route.host)) ? route : standins.resolve(cr);
  };
}
