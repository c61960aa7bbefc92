// `npm start`'s monitoring (docs/dev/monitoring.md):
//   metrics        the control plane's metrics server (VictoriaMetrics, built into the bed's cache), data
//                  kept in .data/metrics; it scrapes the API's and the worker's metrics listeners
//   gpu-exporters  a stand-in DCGM + HAMi exporter per GPU node of every GPU cluster; cards held by a
//                  session pod carry its labels and a gently moving load, so the console's charts live
// The operators scrape their cluster's exporters and forward to the API, which writes to the server.
import { join } from "node:path";
import { adminKube } from "../clusters/credentials.ts";
import { SESSIONS_NS } from "../sessions/harness.ts";
import { type GpuCard, type RunningGpuExporter, startGpuExporter } from "../testbed/gpu-exporter.ts";
import { type RunningMetricsServer, startMetricsServer } from "../testbed/metrics-server.ts";
import type { Service } from "./service.ts";

let server: RunningMetricsServer | undefined;

export const metricsService: Service = {
  name: "metrics",
  async start(ctx) {
    server = await startMetricsServer({ dir: join(ctx.dataDir, "metrics"), scrapeIntervalSeconds: 15 });
    const running = server;
    return {
      endpoints: [{ name: "metrics server", url: `${running.url} (Prometheus query API under /api/v1)` }],
      publish: { BERTH_METRICS_SERVER_URL: running.url },
      stop: async () => {
        targets.length = 0;
        await running.stop();
      },
    };
  },
};

const targets: { job: string; address: string }[] = [];

/** The metrics server scrapes a control-plane process's metrics listener (the API's, the worker's). */
export async function scrape(job: string, metricsUrl: string | undefined): Promise<void> {
  if (!server || !metricsUrl) return;
  targets.push({ job, address: new URL(metricsUrl).host });
  await server.setScrapeTargets(targets);
}

interface Node {
  metadata: { name: string; labels?: Record<string, string> };
  status?: { capacity?: Record<string, string> };
}
interface Pod {
  metadata: { name: string; namespace: string };
  spec: { nodeName?: string; containers: { name: string; resources?: { limits?: Record<string, string> } }[] };
  status?: { phase?: string };
}

/** Stable card UUIDs per node (the sharing layer's own, when the node lists them in a label). */
function cardsOf(cluster: string, n: Node): GpuCard[] {
  const model = n.metadata.labels?.["nvidia.com/gpu.product"] ?? "NVIDIA-GPU";
  const count = Number(n.status?.capacity?.["nvidia.com/gpu"] ?? n.metadata.labels?.["nvidia.com/gpu.count"] ?? 0);
  const memoryMiB = Number(n.metadata.labels?.["nvidia.com/gpu.memory"] ?? 81_559);
  return Array.from({ length: count }, (_, i) => ({
    uuid: `GPU-${cluster}-${n.metadata.name}-${i}`.replace(/[^A-Za-z0-9-]/g, "-"),
    node: n.metadata.name,
    model,
    memoryMiB,
  }));
}

export const gpuExportersService: Service = {
  name: "gpu-exporters",
  async start(ctx) {
    const exporters: RunningGpuExporter[] = [];
    const urls: Record<string, string[]> = {};
    const timers = new Map<string, NodeJS.Timeout>();
    const kubes: { close(): void }[] = [];
    let stopped = false;
    for (const c of ctx.fleet.clusters.filter((x) => x.kind === "gpu")) {
      const kube = adminKube(c);
      kubes.push(kube);
      const nodes = (await kube.json<{ items: Node[] }>("GET", "/api/v1/nodes")).items;
      const byNode = new Map<string, { exporter: RunningGpuExporter; cards: GpuCard[] }>();
      for (const n of nodes) {
        const cards = cardsOf(c.name, n);
        if (cards.length === 0) continue;
        const exporter = await startGpuExporter({ cards });
        exporters.push(exporter);
        byNode.set(n.metadata.name, { exporter, cards });
        urls[c.name] = [...(urls[c.name] ?? []), exporter.url];
      }
      // Cards follow the session pods on each node (the kubelet tells the real exporter which pod holds
      // which card); a pod's load drifts between 30 and 90 %, idle cards sit at 0.
      const started = Date.now();
      const holders = new Map<string, Set<string>>();
      const tick = async () => {
        const pods = (await kube.json<{ items: Pod[] }>("GET", `/api/v1/namespaces/${SESSIONS_NS}/pods`)).items;
        for (const [node, { exporter, cards }] of byNode) {
          const here = pods.filter((p) => p.spec.nodeName === node && p.status?.phase === "Running");
          let next = 0;
          const held = new Set<string>();
          for (const [i, p] of here.entries()) {
            const container = p.spec.containers[0];
            const gpus = Number(container?.resources?.limits?.["nvidia.com/gpu"] ?? 1);
            for (let g = 0; g < gpus && next < cards.length; g++) {
              const card = cards[next++] as GpuCard;
              held.add(card.uuid);
              const t = (Date.now() - started) / 60_000 + i;
              const util = Math.round(60 + 30 * Math.sin(t));
              const mem = Math.round(card.memoryMiB * (0.3 + 0.2 * Math.sin(t / 2)));
              exporter.setContainer(
                {
                  pod: p.metadata.name,
                  namespace: p.metadata.namespace,
                  container: container?.name ?? "main",
                  uuid: card.uuid,
                },
                { util, memUsedMiB: mem },
              );
              exporter.setCard(card.uuid, {
                util,
                memUsedMiB: mem,
                powerW: 80 + util * 3,
                tempC: 35 + Math.round(util / 3),
              });
            }
          }
          for (const card of cards)
            if (!held.has(card.uuid)) exporter.setCard(card.uuid, { util: 0, memUsedMiB: 0, powerW: 60, tempC: 33 });
          const now = new Set(here.map((p) => p.metadata.name));
          for (const gone of [...(holders.get(node) ?? [])].filter((x) => !now.has(x)))
            exporter.removeContainer({ pod: gone, namespace: SESSIONS_NS });
          holders.set(node, now);
        }
      };
      const loop = () => {
        tick()
          .catch(() => undefined)
          .finally(() => {
            if (stopped) return;
            const t = setTimeout(loop, 5000);
            t.unref();
            timers.set(c.name, t);
          });
      };
      loop();
    }
    return {
      publish: { BERTH_LOCAL_GPU_EXPORTERS: JSON.stringify(urls) },
      stop: async () => {
        stopped = true;
        for (const t of timers.values()) clearTimeout(t);
        for (const k of kubes) k.close();
        await Promise.all(exporters.map((e) => e.stop()));
      },
    };
  },
};
