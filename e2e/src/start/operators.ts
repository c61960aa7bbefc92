// `npm start`'s operators: one per registered GPU cluster, with the local stand-ins' addresses (GPU
// exporters, the gateway's metrics, the apps behind the gateways) and builds on the build cluster.
import { parseConfig as parseOperatorConfig, type RunningOperator, startOperator } from "@berth/operator";
import pino from "pino";
import { realPodCidrsOf } from "../connect/local-gateways.ts";
import { LOCAL_BUILD_NODES } from "./builds.ts";
import { logLevel, type Service } from "./service.ts";

export const operatorsService: Service = {
  name: "operators",
  async start(ctx) {
    const regs = JSON.parse(ctx.published.BERTH_LOCAL_CLUSTERS ?? "[]") as {
      cluster: string;
      clusterId: string;
      tokenFile: string;
      operatorKubeconfigFile: string;
    }[];
    const log = pino({ level: logLevel, base: { service: "berth-operator" } });
    const exporters = JSON.parse(ctx.published.BERTH_LOCAL_GPU_EXPORTERS ?? "{}") as Record<string, string[]>;
    const standins = JSON.parse(ctx.published.BERTH_LOCAL_STANDINS ?? "{}") as Record<string, string>;
    const gatewayMetrics = JSON.parse(ctx.published.BERTH_LOCAL_GATEWAY_METRICS ?? "{}") as Record<string, string>;
    const running: RunningOperator[] = [];
    try {
      for (const r of regs) {
        running.push(
          await startOperator(
            parseOperatorConfig({
              clusterId: r.clusterId,
              kube: { mode: "kubeconfig", path: r.operatorKubeconfigFile },
              controlPlaneUrl: ctx.published.BERTH_INTERNAL_URL,
              tokenFile: r.tokenFile,
              http: { host: "127.0.0.1", port: 0 },
              lease: { identity: `${r.cluster}-operator-0` },
              // The cluster's stand-in exporters (metrics.ts): usage figures, and the charts' series forwarded.
              gpuMetrics: { urls: exporters[r.cluster] ?? [], intervalMs: 5000 },
              // The gateway is a local process, not a pod: read by URL, no pods looked for.
              processMetrics: {
                gatewaySelector: "none",
                gatewayUrls: gatewayMetrics[r.cluster] ? [gatewayMetrics[r.cluster] as string] : [],
              },
              // Sessions' apps are the gateways' stand-in here (no pod runs): the idle rule reads its notebook
              // status there, as the gateway proxies to it (docs/dev/idle-and-limits.md).
              // A real node's pods answer at their own address: read there (docs/dev/real-sessions.md).
              ...(standins[r.cluster]
                ? {
                    activity: {
                      appUpstreams: `*=${standins[r.cluster]}`,
                      directCidrs: realPodCidrsOf(ctx.fleet, r.cluster),
                    },
                  }
                : {}),
              // The build cluster (builds.ts): Jobs on its real node.
              ...(r.cluster === ctx.published.BERTH_LOCAL_BUILD_CLUSTER
                ? { builds: { namespace: "berth-builds", nodeSelector: LOCAL_BUILD_NODES } }
                : {}),
              logLevel,
            }),
            { log: log.child({ cluster: r.cluster }) },
          ),
        );
      }
    } catch (err) {
      for (const o of running) await o.stop().catch(() => {});
      throw err;
    }
    return {
      stop: async () => {
        for (const o of running) await o.stop().catch(() => {});
      },
    };
  },
};
