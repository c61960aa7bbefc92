// biome-ignore-all lint/suspicious/noExplicitAny: journeys read the API's JSON as it comes
// The ground of the real-pod journeys (e2e/src/real/*.test.ts): the sessions bed (e2e/src/sessions/harness.ts)
// whose gpu-b is one real node (a kubelet and containerd on this host, e2e/src/testbed/real-node) with the
// CSI hostpath driver (e2e/src/testbed/csi-hostpath.ts), the session images built here
// (cdk8s/src/image/sessions.ts) pushed to a bed registry the kubelet pulls from, offered as the local
// catalog's images (api/src/bootstrap/localImages.ts), a preset that fits this machine, a pool on the
// driver's class, and each cluster's gateway (real-node pods dialled at their address).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { controlPlaneRbac } from "@berth/api/rbac";
import { buildBuilderImage, builderImageRef, pushBuilderImage } from "@berth/cdk8s/image/builder";
import { buildSessionImage, type SessionImageKind } from "@berth/cdk8s/image/sessions";
import { ApiError } from "@berth/console/client";
import { HttpKube } from "@berth/controllers/kube";
import { cookieFrom, get } from "@berth/operator/gateway/testing";
import type WebSocket from "ws";
import { bedApi } from "../api-client.ts";
import {
  BUILDS_NAMESPACE,
  ensureBridgeAddress,
  installBuildCluster,
  REAL_NODE_BUILDS,
  type RegistryRelay,
  startRegistryRelay,
} from "../builds/real-builds.ts";
import { type SessionGateways, startSessionGateways } from "../console/stack.ts";
import {
  gpuCluster,
  H100,
  MANAGEMENT,
  type SessionsBed,
  type SessionsBedOptions,
  SYSTEM_NS,
  startSessionsBed,
} from "../sessions/harness.ts";
import { HOSTPATH_STORAGE_CLASS, type RunningCsiHostpath, startCsiHostpath } from "../testbed/csi-hostpath.ts";
import { type RunningGpuExporter, startGpuExporter } from "../testbed/gpu-exporter.ts";
import { kubeConfigFrom } from "../testbed/kubeconfig.ts";
import type { RealNode } from "../testbed/real-node/index.ts";
import { type LocalRegistry, startRegistry } from "../testbed/registry.ts";
import { converse } from "./converse.ts";
import { ensureRealPreset, offerSessionImages, REAL_PRESET, steerGpuSessionsToRealNode } from "./real-node-sessions.ts";

export const L4 = "NVIDIA-L4";
export const REAL_NODE = "gpu-b-real-journey";
export { REAL_PRESET };

export interface RealFleet {
  bed: SessionsBed;
  node: RealNode;
  registry: LocalRegistry;
  gateways: SessionGateways;
  csi: RunningCsiHostpath;
  /** Local catalog image names by kind (jupyterlab-local, …) and their references. */
  images: Record<string, { name: string; ref: string }>;
  /** The real node's stand-in GPU exporter (no GPU exists here), when asked for (`gpuMetricsIntervalMs`). */
  exporter?: RunningGpuExporter;
  /** The real node's cards as the exporter names them. */
  cards: string[];
  /**
   * With `builds`: the relay from the node's pods to the registry, whose host is Berth's registry for pods
   * and the kubelet (BERTH_REGISTRY_PULL_PREFIX); gpu-b is then marked for builds on its real node.
   */
  relay?: RegistryRelay;
  stop(): Promise<void>;
}

export async function startRealFleet(
  kinds: SessionImageKind[],
  opts: Pick<
    SessionsBedOptions,
    | "worker"
    | "workerReclaim"
    | "operatorActivityIntervalMs"
    | "operatorUsageIntervalMs"
    | "operatorAppReadyTimeoutMs"
    | "apiEnv"
    | "workerSnapshots"
  > & {
    /** The real node's name: each file's own, so that files running at once each have their node. */
    nodeName?: string;
    /**
     * A stand-in GPU exporter for the real node's cards, scraped by gpu-b's operator this often: the idle
     * rule's GPU signal is unknown without one, and idle pausing then waits (docs/dev/idle-and-limits.md).
     */
    gpuMetricsIntervalMs?: number;
    /** The gateways report the traffic signal this often (default: not at all, the signal stays unknown). */
    gatewayActivityIntervalMs?: number;
    /**
     * gpu-b as the fleet's build cluster (as `npm start`'s, e2e/src/start/builds.ts): the bed's registry is
     * Berth's registry, reached from the node's pods through a relay on its bridge; the builder image is
     * built (cached) and pushed there; the worker runs builds, gpu-b's operator runs their Jobs on the real
     * node, and the cluster is marked through the API.
     */
    builds?: boolean;
  } = {},
): Promise<RealFleet> {
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch((e: unknown) => console.error("[real fleet] stop:", e));
  };
  try {
    const built = kinds.map((k) => buildSessionImage(k, { quiet: true }));
    const registry = await startRegistry({ name: "real-journey-registry" });
    stops.push(() => registry.stop());
    const { nodeName: _, gpuMetricsIntervalMs, gatewayActivityIntervalMs, builds, ...bedOpts } = opts;
    const nodeName = opts.nodeName ?? REAL_NODE;
    const cards = [0, 1].map((i) => `GPU-gpu-b-${nodeName}-${i}`);
    let exporter: RunningGpuExporter | undefined;
    if (gpuMetricsIntervalMs) {
      const e = await startGpuExporter({
        cards: cards.map((uuid) => ({ uuid, node: nodeName, model: L4, memoryMiB: 23034 })),
      });
      exporter = e;
      stops.push(() => e.stop());
    }
    // Set while the bed starts (apiEnvFrom), read after.
    const made: { relay?: RegistryRelay } = {};
    const bed = await startSessionsBed({
      ...bedOpts,
      ...(builds
        ? {
            workerImages: true,
            operatorBuilds: {
              "gpu-b": {
                namespace: BUILDS_NAMESPACE,
                nodeSelector: Object.entries(REAL_NODE_BUILDS)
                  .map(([k, v]) => `${k}=${v}`)
                  .join(","),
              },
            },
            apiEnvFrom: async (fleet) => {
              const node = fleet.realNodes[0] as RealNode;
              const r = await startRegistryRelay(ensureBridgeAddress(node), registry.host);
              made.relay = r;
              stops.push(() => r.stop());
              node.trustRegistry(r.host);
              const builder = buildBuilderImage({ quiet: true });
              await pushBuilderImage(builder, registry.host);
              return {
                BERTH_REGISTRY_URL: registry.url,
                BERTH_REGISTRY_PULL_PREFIX: r.host,
                BERTH_BUILDER_IMAGE: builderImageRef(r.host, builder.tag),
              };
            },
          }
        : {}),
      ...(exporter && gpuMetricsIntervalMs
        ? { operatorGpuMetrics: { url: exporter.url, intervalMs: gpuMetricsIntervalMs } }
        : {}),
      realNodes: { registries: [registry.host] },
      fleet: {
        clusters: [
          MANAGEMENT,
          gpuCluster("gpu-a", [{ name: "gpu-a-1", gpuModel: H100, gpuCount: 2 }]),
          // gpu-b's L4 cards are the real node's only: every L4 session really runs.
          {
            ...gpuCluster("gpu-b", []),
            realNode: {
              name: nodeName,
              gpuModel: L4,
              gpuCount: 2,
              gpuMemoryMib: 23034,
            },
          },
        ],
      },
    });
    stops.push(() => bed.stop());
    const node = bed.fleet.realNodes[0] as RealNode;
    // Every gpu-b session is meant for the real node (real-node-sessions.ts).
    await steerGpuSessionsToRealNode(bed.fleet.cluster("gpu-b"));
    const dir = mkdtempSync(join(tmpdir(), "berth-real-csi-"));
    stops.push(async () => rmSync(dir, { recursive: true, force: true }));
    const csi = await startCsiHostpath({
      cluster: bed.fleet.cluster("gpu-b"),
      nodeName: node.name,
      kubeletRootDir: node.layout.kubeletRoot,
      dir,
      capacityGib: 50,
    });
    stops.push(() => csi.stop());
    const mgmt = new HttpKube(kubeConfigFrom(bed.fleet.cluster("mgmt").kubeconfig));
    let images: RealFleet["images"];
    try {
      // With builds the catalog names the relay, which the builder's pods reach too (as `npm start` does).
      images = await offerSessionImages(mgmt, built, registry.host, made.relay?.host ?? registry.host);
      await ensureRealPreset(mgmt);
    } finally {
      mgmt.close();
    }
    const admin = bedApi(bed, bed.superAdmin);
    const refused = (what: string) => (e: unknown) => {
      throw e instanceof ApiError ? new Error(`${what}: ${e.status} ${e.code} ${e.message}`) : e;
    };
    const gpuB = bed.gpu["gpu-b"]?.id as string;
    await admin
      .call("createStoragePool", {
        body: { name: "real", cluster: gpuB, storage_class: HOSTPATH_STORAGE_CLASS, manual_capacity_gb: 50 },
      })
      .catch(refused("pool"));
    if (builds) {
      await installBuildCluster(bed.fleet.cluster("gpu-b"), {
        controlPlane: {
          name: "berth-control-plane",
          namespace: controlPlaneRbac().namespaceRules[0]?.namespace ?? "berth-system",
        },
        operator: { name: "berth-operator", namespace: SYSTEM_NS },
      });
      await admin
        .call("markBuildCluster", { params: { clusterId: gpuB }, body: {} })
        .catch(refused("marking gpu-b for builds"));
    }
    const gateways = await startSessionGateways(
      bed,
      gatewayActivityIntervalMs ? { activityIntervalMs: gatewayActivityIntervalMs } : {},
    );
    stops.push(() => gateways.stop());
    return {
      bed,
      node,
      registry,
      gateways,
      csi,
      images,
      ...(exporter ? { exporter } : {}),
      cards,
      ...(made.relay ? { relay: made.relay } : {}),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A session's pod on gpu-b as the cluster has it. */
export async function podOf(f: RealFleet, cr: string): Promise<any> {
  const k = new HttpKube(kubeConfigFrom(f.bed.fleet.cluster("gpu-b").kubeconfig));
  try {
    const r = await k.request<any>("GET", `/api/v1/namespaces/berth-sessions/pods/${cr}`);
    return r.status === 200 ? r.body : undefined;
  } finally {
    k.close();
  }
}

/** gpu-b's gateway: its URL and CA, and a browser's way in through a connect link (the 303 sets the cookie). */
export function gatewayOf(f: RealFleet) {
  const gw = f.gateways.byCluster.get("gpu-b");
  if (!gw) throw new Error("no gateway for gpu-b");
  const ca = f.gateways.certs.get("gpu-b");
  const open = (url: string, headers: Record<string, string> = {}, method = "GET", body?: string) =>
    get(url, { headers, method, ...(ca ? { ca } : {}), ...(body !== undefined ? { body } : {}) });
  return {
    url: gw.url,
    ca,
    open,
    async signIn(link: string): Promise<string> {
      const first = await open(link);
      if (first.status !== 303) throw new Error(`the link answered ${first.status}: ${first.body.slice(0, 500)}`);
      return cookieFrom(first) as string;
    },
    /** A WebSocket through the gateway with the cookie; collects text frames until `done` (or throws at the deadline). */
    converse(
      path: string,
      cookie: string,
      send: (ws: WebSocket) => void,
      done: (all: string[]) => boolean,
      ms = 60_000,
    ) {
      return converse(new URL(path, gw.url), { cookie, ...(ca ? { ca } : {}) }, send, done, ms);
    },
  };
}

/** One Jupyter messaging-protocol execute_request on a kernel's shell channel; its execute_result's text. */
export function executeRequest(code: string, msgId: string): string {
  return JSON.stringify({
    channel: "shell",
    header: {
      msg_id: msgId,
      msg_type: "execute_request",
      username: "researcher",
      session: "journey",
      version: "5.3",
      date: new Date().toISOString(),
    },
    parent_header: {},
    metadata: {},
    content: { code, silent: false, store_history: false, user_expressions: {}, allow_stdin: false },
    buffers: [],
  });
}

/** The first reply to `msgId` of one of these types on any channel. */
export function replyTo(frames: string[], msgId: string, types: string[]): any {
  return frames
    .map((f) => JSON.parse(f))
    .find((m) => m.parent_header?.msg_id === msgId && types.includes(m.msg_type ?? m.header?.msg_type));
}

/**
 * Signs `who` in through the session's connect link (gpu-b's gateway) and starts a kernel in its
 * JupyterLab: the cookie (with Jupyter's _xsrf) and the kernel's id.
 */
export async function openLab(
  f: RealFleet,
  who: { token: string },
  id: string,
  cr: string,
): Promise<{ cookie: string; kernel: string }> {
  const gw = gatewayOf(f);
  const links = await bedApi(f.bed, who).call("getSessionConnectLinks", { params: { sessionId: id } });
  const cookie = await gw.signIn(links.links.lab as string);
  const page = await gw.open(`${gw.url}/proxy/${cr}/lab`, { cookie });
  if (page.status !== 200) throw new Error(`the Lab answered ${page.status}`);
  // Jupyter keeps its _xsrf check on writes: the page sets the cookie that API calls send back as a header.
  const xsrf = /_xsrf=([^;]+)/.exec(String(page.headers["set-cookie"] ?? ""))?.[1] ?? "";
  const started = await gw.open(
    `${gw.url}/proxy/${cr}/api/kernels`,
    { cookie: `${cookie}; _xsrf=${xsrf}`, "x-xsrftoken": xsrf, "content-type": "application/json" },
    "POST",
    JSON.stringify({ name: "python3" }),
  );
  if (started.status !== 201) throw new Error(`starting a kernel: ${started.status} ${started.body}`);
  return { cookie: `${cookie}; _xsrf=${xsrf}`, kernel: JSON.parse(started.body).id };
}

/** Runs `code` in the kernel through the gateway: its execute_result's text, else its printed output. */
export async function runCell(
  f: RealFleet,
  cr: string,
  lab: { cookie: string; kernel: string },
  code: string,
  ms = 120_000,
): Promise<string> {
  const id = `exec-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`;
  const frames = await gatewayOf(f).converse(
    `/proxy/${cr}/api/kernels/${lab.kernel}/channels`,
    lab.cookie,
    (ws) => ws.send(executeRequest(code, id)),
    (all) =>
      all.some((x) => {
        const m = JSON.parse(x);
        return m.parent_header?.msg_id === id && m.msg_type === "status" && m.content?.execution_state === "idle";
      }),
    ms,
  );
  const error = replyTo(frames, id, ["error"]);
  if (error) throw new Error(`the cell failed: ${error.content.ename}: ${error.content.evalue}`);
  const result = replyTo(frames, id, ["execute_result"]);
  if (result) return result.content.data["text/plain"];
  return frames
    .map((x) => JSON.parse(x))
    .filter((m) => m.parent_header?.msg_id === id && m.msg_type === "stream")
    .map((m) => m.content.text)
    .join("");
}
