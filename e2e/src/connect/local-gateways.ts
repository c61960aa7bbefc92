// `npm start`: one session gateway per GPU cluster of the local fleet, each on its own loopback port with
// a certificate made for it, authenticated to the control plane with that cluster's operator token, and
// a stand-in application behind it (pod IPs are data on the bed), except for the pods of a real node
// (e2e/src/testbed/real-node), which the gateway reaches at their own address. A session whose pod does not run
// (paused, gone) shows its page instead of the stand-in: the gate asks the cluster's API.
//
// Wiring (e2e/src/start/main.ts, SERVICES, after the API and the clusters' registration):
//   - register the GPU clusters with `sessionDomain: localSessionDomain(fleet)` so the links the API hands
//     out name these gateways (https://127.0.0.1:9443/proxy/{cr}/lab on gpu-a, :9444 on gpu-b, …);
//   - publish BERTH_INTERNAL_URL (the internal listener) and BERTH_LOCAL_CLUSTERS (JSON of the
//     LocalRegistration list: cluster, clusterId, tokenFile) for `gatewaysService`.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { InternalClient } from "@berth/operator";
import {
  ActivityTracker,
  addressMatcher,
  GatewayMetrics,
  gatedUpstreams,
  httpVerifier,
  kubePodRunning,
  kubePodUpstreams,
  type RunningGateway,
  StaticUpstreams,
  selfSignedCertificate,
  startGateway,
  startStatusServer,
} from "@berth/operator/gateway";
import { type RunningStandin, startStandin } from "@berth/operator/standin";
import type { Fleet } from "../testbed/types.ts";

/** First gateway port; the n-th GPU cluster of the fleet gets FIRST_PORT + n. */
export const FIRST_GATEWAY_PORT = 9443;
export const SESSIONS_NAMESPACE = "berth-sessions";

/** The session domain of each GPU cluster of the local fleet: 127.0.0.1:<its gateway's port>. */
export function localSessionDomain(fleet: Fleet, firstPort = FIRST_GATEWAY_PORT): (cluster: string) => string {
  const gpu = fleet.clusters.filter((c) => c.kind === "gpu").map((c) => c.name);
  return (cluster) => {
    const i = gpu.indexOf(cluster);
    if (i < 0) throw new Error(`${cluster} is not a GPU cluster of the fleet`);
    return `127.0.0.1:${firstPort + i}`;
  };
}

export interface LocalGatewayInput {
  fleet: Fleet;
  /** From registerLocalGpuClusters. */
  registrations: ReadonlyArray<{ cluster: string; clusterId: string; tokenFile: string; sessionDomain: string }>;
  /** The control plane's internal listener. */
  internalUrl: string;
  /** Where each gateway's certificate is written (so a browser or curl can be told to trust it). */
  dataDir: string;
  log?: (line: string) => void;
}

export interface LocalGateways {
  endpoints: { name: string; url: string }[];
  gateways: Map<string, RunningGateway>;
  /** Each cluster's stand-in app (host:port): the operator reads its notebook status there for the idle rule. */
  standins: Record<string, string>;
  /** Each cluster's gateway status URL (GET /metrics): its operator forwards it (not a pod here, so by URL). */
  statusUrls: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * One GPU cluster's gateway with a stand-in app behind it, admitting only sessions whose pod runs there:
 * what `npm start` and the console journeys both run.
 */
export function startClusterGateway(o: {
  clusterId: string;
  cluster: { server: string; caPem: string; adminToken: string };
  internalUrl: string;
  tokenFile: string;
  standinPort: number;
  tls: ReturnType<typeof selfSignedCertificate>;
  host: string;
  port: number;
  verifyTimeoutMs?: number;
  podCacheTtlMs?: number;
  upstreamConnectTimeoutMs?: number;
  metrics?: GatewayMetrics;
  /** The pod ranges of the cluster's real nodes (RealNode.podCidr): those pods are dialled at their address. */
  realPodCidrs?: readonly string[];
  /**
   * Reports the idle rule's traffic signal every this many ms (BERTH_GATEWAY_ACTIVITY_INTERVAL_MS of a
   * deployed gateway); default: no reports, so the traffic signal stays unknown and idle pausing waits.
   */
  activityIntervalMs?: number;
}): Promise<RunningGateway> {
  return startGateway({
    clusterId: o.clusterId,
    verifier: httpVerifier({
      baseUrl: o.internalUrl,
      tokenFile: o.tokenFile,
      ...(o.verifyTimeoutMs !== undefined ? { timeoutMs: o.verifyTimeoutMs } : {}),
    }),
    upstreams:
      // With a real node, its pods are dialled where they run (the host reaches its bridge); kwok's go to the
      // stand-in as before.
      o.realPodCidrs?.length
        ? kubePodUpstreams({
            server: o.cluster.server,
            caPem: o.cluster.caPem,
            token: o.cluster.adminToken,
            namespace: SESSIONS_NAMESPACE,
            direct: addressMatcher(o.realPodCidrs),
            fallback: new StaticUpstreams({ "*": `127.0.0.1:${o.standinPort}` }),
            ...(o.podCacheTtlMs !== undefined ? { ttlMs: o.podCacheTtlMs } : {}),
          })
        : gatedUpstreams(
            new StaticUpstreams({ "*": `127.0.0.1:${o.standinPort}` }),
            kubePodRunning({
              server: o.cluster.server,
              caPem: o.cluster.caPem,
              token: o.cluster.adminToken,
              namespace: SESSIONS_NAMESPACE,
            }),
            ...(o.podCacheTtlMs !== undefined ? [{ ttlMs: o.podCacheTtlMs }] : []),
          ),
    tls: o.tls,
    host: o.host,
    port: o.port,
    ...(o.upstreamConnectTimeoutMs !== undefined ? { upstreamConnectTimeoutMs: o.upstreamConnectTimeoutMs } : {}),
    ...(o.metrics ? { metrics: o.metrics } : {}),
    ...(o.activityIntervalMs
      ? {
          activity: {
            tracker: new ActivityTracker(),
            intervalMs: o.activityIntervalMs,
            client: new InternalClient({ baseUrl: o.internalUrl, tokenFile: o.tokenFile, timeoutMs: 5_000 }),
          },
        }
      : {}),
  });
}

/** The pod ranges of a cluster's real nodes (none on a kwok-only fleet). */
export function realPodCidrsOf(fleet: Fleet, cluster: string): string[] {
  return fleet.realNodes.filter((n) => n.cluster === cluster).map((n) => n.podCidr);
}

export async function startLocalGateways(input: LocalGatewayInput): Promise<LocalGateways> {
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => {});
  };
  const gateways = new Map<string, RunningGateway>();
  const endpoints: { name: string; url: string }[] = [];
  const standins: Record<string, string> = {};
  const statusUrls: Record<string, string> = {};
  try {
    for (const r of input.registrations) {
      const cluster = input.fleet.cluster(r.cluster);
      const standin: RunningStandin = await startStandin({ name: r.cluster });
      stops.push(() => standin.close());
      standins[r.cluster] = `127.0.0.1:${standin.port}`;
      const [host, portText] = r.sessionDomain.split(":");
      const tls = selfSignedCertificate({ names: [host ?? "127.0.0.1", "localhost"] });
      const certFile = join(input.dataDir, `gateway-${r.cluster}.crt`);
      writeFileSync(certFile, tls.certPem);
      const metrics = new GatewayMetrics();
      const gateway = await startClusterGateway({
        clusterId: r.clusterId,
        cluster,
        internalUrl: input.internalUrl,
        tokenFile: r.tokenFile,
        standinPort: standin.port,
        tls,
        host: host ?? "127.0.0.1",
        port: Number(portText ?? 0),
        metrics,
        realPodCidrs: realPodCidrsOf(input.fleet, r.cluster),
        // The idle rule's traffic signal, as a deployed gateway's default: without it the rule waits for ever.
        activityIntervalMs: 30_000,
      });
      stops.push(() => gateway.close());
      const status = await startStatusServer(() => metrics.registry.metrics(), { host: "127.0.0.1", port: 0 });
      stops.push(() => status.close());
      statusUrls[r.cluster] = `${status.url}/metrics`;
      gateways.set(r.cluster, gateway);
      endpoints.push({
        name: `gateway ${r.cluster}`,
        url: `${gateway.url}/proxy/<session>/lab (certificate ${certFile})`,
      });
      input.log?.(`[gateways] ${r.cluster}: ${gateway.url}, stand-in ${standin.url}`);
    }
    return { endpoints, gateways, standins, statusUrls, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The `npm start` service: reads BERTH_INTERNAL_URL and BERTH_LOCAL_CLUSTERS from earlier services. */
export const gatewaysService = {
  name: "gateways",
  async start(ctx: {
    fleet: Fleet;
    dataDir: string;
    published: Readonly<Record<string, string>>;
    log: (line: string) => void;
  }) {
    const internalUrl = ctx.published.BERTH_INTERNAL_URL;
    const clusters = ctx.published.BERTH_LOCAL_CLUSTERS;
    if (!internalUrl || !clusters)
      throw new Error("gateways need BERTH_INTERNAL_URL and BERTH_LOCAL_CLUSTERS from the API service");
    const g = await startLocalGateways({
      fleet: ctx.fleet,
      registrations: JSON.parse(clusters),
      internalUrl,
      dataDir: ctx.dataDir,
      log: ctx.log,
    });
    return {
      endpoints: g.endpoints,
      publish: {
        BERTH_LOCAL_STANDINS: JSON.stringify(g.standins),
        BERTH_LOCAL_GATEWAY_METRICS: JSON.stringify(g.statusUrls),
      },
      stop: g.stop,
    };
  },
};
