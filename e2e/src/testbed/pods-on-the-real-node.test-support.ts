// biome-ignore-all lint/suspicious/noExplicitAny: the apiserver's JSON as it comes
// The ground of the real node's network journeys (the apiserver's reach, Services and DNS, NetworkPolicy):
// a GPU cluster with one real node, a registry holding the terminal image (the session images' Debian base:
// Python and little more), the cluster's admin client, and pods run on the node to their end.
import { buildSessionImage, pushSessionImage } from "@berth/cdk8s/image/sessions";
import { startFleet } from "./fleet.ts";
import { KubeHttp } from "./kube.ts";
import { REAL_NODE_TAINT, type RealNode, type StartRealNodeOptions, startRealNode } from "./real-node/index.ts";
import { type LocalRegistry, startRegistry } from "./registry.ts";
import type { Fleet } from "./types.ts";
import { eventually } from "./waiting.test-support.ts";

const NS = "default";

export interface PodsOnTheRealNode {
  node: RealNode;
  kube: KubeHttp;
  /** The terminal image's reference in the bed's registry. */
  image: string;
  /** A pod of one container pinned to the node (its taint tolerated), never restarted. */
  pod(name: string, labels: Record<string, string>, container: Record<string, unknown>): Record<string, unknown>;
  /** Makes the pod in `default` and waits for its container to end: its exit code and its log. */
  runToEnd(
    name: string,
    container: Record<string, unknown>,
    labels?: Record<string, string>,
  ): Promise<{ exitCode: number; log: string }>;
  stop(): Promise<void>;
}

export async function startPodsOnTheRealNode(o: {
  cluster: string;
  node: string;
  registry: string;
  options?: Pick<StartRealNodeOptions, "services" | "networkPolicy">;
  /** Fake cards on the node; default 1. */
  gpuCount?: number;
}): Promise<PodsOnTheRealNode> {
  let fleet: Fleet | undefined;
  let registry: LocalRegistry | undefined;
  let node: RealNode | undefined;
  try {
    [fleet, registry] = await Promise.all([
      startFleet({ clusters: [{ name: o.cluster, kind: "gpu", nodes: [] }] }),
      startRegistry({ name: o.registry }),
    ]);
    node = await startRealNode({
      cluster: fleet.cluster(o.cluster),
      name: o.node,
      gpuModel: "NVIDIA-L4",
      gpuCount: o.gpuCount ?? 1,
      registries: [registry.host],
      ...o.options,
    });
    const image = (await pushSessionImage(buildSessionImage("terminal", { quiet: true }), registry.host)).ref;
    const c = fleet.cluster(o.cluster);
    const kube = new KubeHttp({ server: c.server, caPem: c.caPem, token: c.adminToken });
    const started = { fleet, registry, node };
    const pod = (name: string, labels: Record<string, string>, container: Record<string, unknown>) => ({
      metadata: { name, labels },
      spec: {
        nodeName: o.node,
        tolerations: [{ ...REAL_NODE_TAINT, operator: "Equal" }],
        restartPolicy: "Never",
        terminationGracePeriodSeconds: 1,
        containers: [{ image, ...container }],
      },
    });
    return {
      node,
      kube,
      image,
      pod,
      async runToEnd(name, container, labels = {}) {
        await kube.json("POST", `/api/v1/namespaces/${NS}/pods`, pod(name, labels, container));
        const done = await eventually(
          async () => {
            const p = await kube.json<any>("GET", `/api/v1/namespaces/${NS}/pods/${name}`);
            return p.status.containerStatuses?.[0]?.state?.terminated;
          },
          { what: `pod ${name} finished`, timeoutMs: 180_000 },
        );
        const log = (await kube.raw("GET", `/api/v1/namespaces/${NS}/pods/${name}/log`)).text;
        return { exitCode: done.exitCode as number, log };
      },
      async stop() {
        kube.close();
        await started.node.stop();
        await Promise.all([started.registry.stop(), started.fleet.stop()]);
      },
    };
  } catch (e) {
    await node?.stop();
    await Promise.all([registry?.stop(), fleet?.stop()]);
    throw e;
  }
}
