// startRealNode: a real kubelet with its own containerd joins a GPU cluster of the bed next to the kwok
// nodes. Pods scheduled onto it really run (runc), get an IP on the node's bridge that the host reaches,
// and get `nvidia.com/gpu` from a device plugin that advertises fake cards (there is no GPU here; the
// node's labels say so). Before it starts, the teardown clears whatever a killed run of the same name
// left; stop() runs it again.
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { join } from "node:path";
import { promisify } from "node:util";
import { findNodeBinaries } from "../binaries.ts";
import { SERVICE_CIDR } from "../cluster.ts";
import { getText } from "../get-text.ts";
import { cardUuid, GPU_RESOURCE, nodeIsReady } from "../gpu.ts";
import { KubeHttp } from "../kube.ts";
import { freePort } from "../ports.ts";
import { type ManagedProcess, spawnManaged } from "../process.ts";
import { processesMentioning, rssBytes } from "../procfs.ts";
import type { Cluster, RealNode } from "../types.ts";
import { type ApiserverForPods, exposeApiserverToPods } from "./apiserver.ts";
import { canRunRealNode, ownerOf } from "./can-run.ts";
import { cniConfig, containerdConfig, kubeletConfig, registryHostsToml } from "./config.ts";
import { dnsServiceIp, startClusterDns } from "./coredns.ts";
import { startKubeProxy } from "./kube-proxy.ts";
import { startKubeRouter } from "./kube-router.ts";
import { DEFAULT_ROOT, DEVICE_PLUGIN_DIR, type HostChanges, type NodeLayout, nodeLayout } from "./layout.ts";
import { ociArchive } from "./oci.ts";
import { describeQuirks, detectQuirks, type HostQuirks, needsForwardRule } from "./quirks.ts";
import { cgroupHierarchies, teardownRealNode } from "./teardown.ts";

const run = promisify(execFile);
const MERGE = "application/merge-patch+json";
const UNINITIALIZED_TAINT = "node.cloudprovider.kubernetes.io/uninitialized";

/** The sandbox image: imported from the build's pause program at every start, never pulled. */
export const PAUSE_IMAGE = "berth.local/testbed/pause:1";

/**
 * Every real node carries this taint, so that only pods meant for it (tolerating it, selecting
 * REAL_NODE_LABELS) land there: the fleet's kwok journeys name images no kubelet here could pull.
 */
export const REAL_NODE_TAINT = { key: "berth.dev/real-node", value: "true", effect: "NoSchedule" } as const;

/** Labels every real node carries: it is real, and its GPUs are not. */
export const REAL_NODE_LABELS = { "berth.dev/real-node": "true", "berth.dev/gpu": "fake" } as const;

export interface StartRealNodeOptions {
  /** A running GPU cluster of the bed (its admin kubeconfig is the kubelet's). */
  cluster: Cluster;
  /** Node name; default `<cluster>-real-1`. */
  name?: string;
  /** `nvidia.com/gpu.product`, as the kwok GPU nodes carry it (e.g. NVIDIA-L4). */
  gpuModel: string;
  /** Fake cards the device plugin advertises as `nvidia.com/gpu`. */
  gpuCount: number;
  /** `nvidia.com/gpu.memory` (MiB); default 0 (unknown). */
  gpuMemoryMib?: number;
  /** Registry hosts (`127.0.0.1:<port>`) to pull from over plain HTTP; more with trustRegistry(). */
  registries?: readonly string[];
  /** The pods' subnet on the node's bridge (the bridge holds .1); default 10.234.<n>.0/24, n from the name. */
  podCidr?: string;
  labels?: Record<string, string>;
  /** Folder with the node's binaries; default BERTH_NODE_BIN, else build-node-binaries.sh. */
  binDir?: string;
  /** Parent of the node's data folder; default /var/lib/berth-real-node. */
  root?: string;
  log?: (line: string) => void;
  /**
   * Runs kube-proxy, so that the cluster's Services (ClusterIPs, the `kubernetes` Service's 10.96.0.1)
   * answer on the node (kube-proxy.ts), and CoreDNS behind `kube-system/kube-dns`, the pods' nameserver
   * (coredns.ts). One such node per host at a time. Default false.
   */
  services?: boolean;
  /**
   * Runs kube-router's firewall, so that the cluster's NetworkPolicies hold for the node's pods
   * (kube-router.ts). One such node per host at a time. Default false.
   */
  networkPolicy?: boolean;
  /**
   * Registers with REAL_NODE_TAINT. Default true; false for a node that is the cluster's only one and
   * runs manifests made elsewhere (an install: e2e/src/install/), which tolerate no bed taint.
   */
  taint?: boolean;
  /** For each of containerd, the Node Ready and the GPUs allocatable. Default 120 s. */
  readyTimeoutMs?: number;
}

export async function startRealNode(o: StartRealNodeOptions): Promise<RealNode> {
  const name = o.name ?? `${o.cluster.name}-real-1`;
  const can = canRunRealNode();
  if (!can.ok) throw new Error(`real node ${name}: ${can.reason}`);
  const owner = ownerOf(name);
  if (owner) throw new Error(`real node ${name} runs already (process ${owner}); give this one another name`);
  const log = o.log ?? (() => {});
  const timeout = o.readyTimeoutMs ?? 120_000;
  const binDir = o.binDir ?? findNodeBinaries();
  const l = nodeLayout(name, o.root ?? DEFAULT_ROOT);
  const podCidr = o.podCidr ?? l.podCidr;
  const kube = new KubeHttp({ server: o.cluster.server, caPem: o.cluster.caPem, token: o.cluster.adminToken });
  const procs: {
    containerd?: ManagedProcess;
    kubelet?: ManagedProcess;
    plugin?: ManagedProcess;
    kubeProxy?: ManagedProcess;
    coredns?: ManagedProcess;
    kubeRouter?: ManagedProcess;
  } = {};
  let apiserver: ApiserverForPods | undefined;

  // A killed run leaves containers, mounts, links and cgroups: clear them, and a stale Node object.
  await teardownRealNode(l, { log, kube });

  const quirks = detectQuirks();
  if (o.networkPolicy && !quirks.bridgeNetfilter)
    throw new Error(
      `real node ${name}: NetworkPolicy needs bridged frames in iptables (br_netfilter, bridge-nf-call-iptables=1)`,
    );
  for (const line of describeQuirks(quirks, l.bridge)) log(`[real-node] ${name}: ${line}`);
  for (const d of [
    l.base,
    l.run,
    l.containerdRoot,
    l.kubeletRoot,
    l.podLogs,
    l.cniConf,
    l.cniIpam,
    l.logs,
    l.registryHosts,
    l.devicePlugins,
    DEVICE_PLUGIN_DIR,
  ])
    mkdirSync(d, { recursive: true });
  writeFileSync(l.ownerFile, String(process.pid));
  recordAndChangeHost(l, quirks);
  makeCgroups(l, quirks);
  shareKubeletRoot(l);

  const gpuIds = Array.from({ length: o.gpuCount }, (_, i) => cardUuid(name, i));
  const kubeletPort = await freePort();
  const healthzPort = await freePort();
  writeFileSync(l.containerdConfig, containerdConfig(l, { cniBinDir: binDir, pauseImage: PAUSE_IMAGE }));
  writeFileSync(join(l.cniConf, "10-berth.conflist"), cniConfig(l, podCidr));
  const clusterDns = o.services ? dnsServiceIp(SERVICE_CIDR) : undefined;
  writeFileSync(l.kubeletConfig, kubeletConfig(l, { port: kubeletPort, healthzPort, quirks, clusterDns }));
  const trustRegistry = (host: string) => {
    mkdirSync(join(l.registryHosts, host), { recursive: true });
    writeFileSync(join(l.registryHosts, host, "hosts.toml"), registryHostsToml(host));
  };
  for (const r of o.registries ?? []) trustRegistry(r);
  const pauseArchive = join(l.base, "pause.oci.tar");
  writeFileSync(
    pauseArchive,
    ociArchive(PAUSE_IMAGE, { files: [{ path: "pause", content: join(binDir, "pause") }], entrypoint: ["/pause"] }),
  );

  const ctr = (...args: string[]) => run("ctr", ["--address", l.containerdSocket, ...args], { timeout: 30_000 });
  const waitFor = async <T>(what: string, proc: ManagedProcess | undefined, probe: () => Promise<T | undefined>) => {
    const deadline = performance.now() + timeout;
    for (;;) {
      if (proc?.hasExited())
        throw new Error(`real node ${name}: ${proc.name} exited while waiting for ${what}:\n${proc.tail(20)}`);
      const v = await probe().catch(() => undefined);
      if (v !== undefined) return v;
      if (performance.now() > deadline)
        throw new Error(
          `real node ${name}: no ${what} after ${timeout / 1000}s; last lines of ${proc?.logFile}:\n${proc?.tail(20)}`,
        );
      await sleep(100);
    }
  };

  const startContainerd = async () => {
    const t = performance.now();
    procs.containerd = spawnManaged({
      name: `${name}/containerd`,
      command: "containerd",
      args: ["--config", l.containerdConfig],
      logFile: join(l.logs, "containerd.log"),
    });
    // The kubelet exits when the runtime does not answer yet.
    await waitFor("containerd answering `ctr version`", procs.containerd, async () =>
      (await ctr("version")) ? true : undefined,
    );
    return performance.now() - t;
  };
  const startKubelet = () => {
    const labels = {
      ...REAL_NODE_LABELS,
      "nvidia.com/gpu.product": o.gpuModel,
      "nvidia.com/gpu.count": String(o.gpuCount),
      "nvidia.com/gpu.memory": String(o.gpuMemoryMib ?? 0),
      ...o.labels,
    };
    procs.kubelet = spawnManaged({
      name: `${name}/kubelet`,
      // In a mount namespace of its own where DEVICE_PLUGIN_DIR is this node's folder (the kubelet fixes
      // that path; several nodes share a host). The root dir stays shared with the host, so containerd
      // and CSI plugins see the volumes it mounts there, and it sees theirs.
      command: "unshare",
      args: [
        "--mount",
        "--propagation",
        "unchanged",
        "--",
        "sh",
        "-c",
        `mount --bind "$0" ${DEVICE_PLUGIN_DIR} && exec "$@"`,
        l.devicePlugins,
        join(binDir, "kubelet"),
        `--config=${l.kubeletConfig}`,
        `--kubeconfig=${o.cluster.kubeconfigPath}`,
        `--root-dir=${l.kubeletRoot}`,
        `--hostname-override=${name}`,
        // The kubelet refuses a loopback --node-ip ("nodeIP can't be loopback address"). As with a cloud
        // provider, it then leaves the addresses to someone else: initializeNode() sets 127.0.0.1.
        "--cloud-provider=external",
        ...(o.taint === false
          ? []
          : [`--register-with-taints=${REAL_NODE_TAINT.key}=${REAL_NODE_TAINT.value}:${REAL_NODE_TAINT.effect}`]),
        `--node-labels=${Object.entries(labels)
          .map(([k, v]) => `${k}=${v}`)
          .join(",")}`,
        "--v=1",
      ],
      logFile: join(l.logs, "kubelet.log"),
    });
    return performance.now();
  };
  // What a cloud controller does for a new node: its addresses (loopback only, as every node of the bed:
  // the apiserver dials InternalIP:kubelet port for logs and exec) and the lifted uninitialized taint.
  const initializeNode = async () => {
    const node = await kube.json<{ spec?: { taints?: { key: string }[] }; status?: { addresses?: unknown[] } }>(
      "GET",
      `/api/v1/nodes/${name}`,
    );
    const taints = node.spec?.taints ?? [];
    const kept = taints.filter((t) => t.key !== UNINITIALIZED_TAINT);
    if (kept.length !== taints.length)
      await kube.json("PATCH", `/api/v1/nodes/${name}`, { spec: { taints: kept } }, MERGE);
    const addresses = [{ type: "InternalIP", address: "127.0.0.1" }];
    if (JSON.stringify(node.status?.addresses) !== JSON.stringify(addresses))
      await kube.json("PATCH", `/api/v1/nodes/${name}/status`, { status: { addresses } }, MERGE);
    return true;
  };
  const nodeReady = async () => {
    const node = await kube.json<{ status?: { allocatable?: Record<string, string> } }>("GET", `/api/v1/nodes/${name}`);
    return nodeIsReady(node as never) ? node : undefined;
  };

  try {
    const containerdMs = await startContainerd();
    await ctr("-n", "k8s.io", "images", "import", "--platform", "linux/amd64", pauseArchive);
    procs.plugin = spawnManaged({
      name: `${name}/fake-gpu-plugin`,
      command: join(binDir, "fake-gpu-plugin"),
      args: [
        `-dir=${l.devicePlugins}`,
        `-endpoint=${l.devicePluginEndpoint}`,
        `-resource=${GPU_RESOURCE}`,
        `-ids=${gpuIds.join(",")}`,
      ],
      logFile: join(l.logs, "fake-gpu-plugin.log"),
    });
    const t = startKubelet();
    await waitFor("the Node registered", procs.kubelet, initializeNode);
    await waitFor("Node Ready", procs.kubelet, nodeReady);
    const nodeReadyMs = performance.now() - t;
    await waitFor(`${o.gpuCount} ${GPU_RESOURCE} allocatable`, procs.kubelet, async () =>
      (await nodeReady())?.status?.allocatable?.[GPU_RESOURCE] === String(o.gpuCount) ? true : undefined,
    );
    const gpuAllocatableMs = performance.now() - t;
    await kube.json(
      "PATCH",
      `/api/v1/nodes/${name}`,
      { metadata: { annotations: { "berth.dev/gpu-uuids": gpuIds.join(",") } } },
      "application/merge-patch+json",
    );
    // The cluster's apiserver where the node's pods reach it (apiserver.ts).
    apiserver = await exposeApiserverToPods({ kube, server: o.cluster.server, node: { layout: l, podCidr } });
    const forPods = { address: apiserver.address, port: apiserver.port };
    if (o.services && clusterDns) {
      procs.kubeProxy = await startKubeProxy({
        layout: l,
        binDir,
        kubeconfig: o.cluster.kubeconfigPath,
        podCidr,
        healthzPort: await freePort(),
        metricsPort: await freePort(),
        timeoutMs: timeout,
      });
      procs.coredns = await startClusterDns({
        layout: l,
        binDir,
        kube,
        kubeconfig: o.cluster.kubeconfigPath,
        podCidr,
        serviceIp: clusterDns,
        readyPort: await freePort(),
        timeoutMs: timeout,
      });
    }
    if (o.networkPolicy)
      procs.kubeRouter = await startKubeRouter({
        layout: l,
        binDir,
        kubeconfig: o.cluster.kubeconfigPath,
        healthPort: await freePort(),
        timeoutMs: timeout,
      });
    const timings = {
      containerdMs: Math.round(containerdMs),
      nodeReadyMs: Math.round(nodeReadyMs),
      gpuAllocatableMs: Math.round(gpuAllocatableMs),
    };
    log(
      `[real-node] ${name} joined ${o.cluster.name}: containerd ${(containerdMs / 1000).toFixed(1)}s, Ready ${(nodeReadyMs / 1000).toFixed(1)}s after the kubelet started, ${o.gpuCount} fake ${o.gpuModel} allocatable`,
    );

    let stopping: Promise<void> | undefined;
    return {
      name,
      cluster: o.cluster.name,
      layout: l,
      quirks,
      podCidr,
      pauseImage: PAUSE_IMAGE,
      kubeletPort,
      gpuIds,
      binDir,
      timings,
      apiserver: forPods,
      trustRegistry,
      importImage: async (archive) => {
        const file = typeof archive === "string" ? archive : join(l.base, `import-${Date.now()}.tar`);
        if (typeof archive !== "string") writeFileSync(file, archive);
        await ctr("-n", "k8s.io", "images", "import", "--platform", "linux/amd64", file);
      },
      restartRuntime: async () => {
        await procs.kubelet?.stop(10_000);
        await procs.containerd?.stop(10_000);
        await startContainerd();
        startKubelet();
        // The Node still reads Ready from before: the new kubelet's own health says it runs.
        await waitFor("the kubelet's healthz after a restart", procs.kubelet, async () =>
          (await getText(`http://127.0.0.1:${healthzPort}/healthz`)) === "ok" ? true : undefined,
        );
        await waitFor("the Node registered", procs.kubelet, initializeNode);
        await waitFor("Node Ready after a restart", procs.kubelet, nodeReady);
        // Exec and logs reach only pods the kubelet has taken back: wait until it lists each bound one.
        await waitFor("the kubelet to take its pods back", procs.kubelet, async () => {
          const bound = await kube.json<{ items: { metadata: { uid: string } }[] }>(
            "GET",
            `/api/v1/pods?fieldSelector=spec.nodeName%3D${encodeURIComponent(name)}`,
          );
          const known = new Set(
            (
              JSON.parse(await kubeletGet(kubeletPort, "/pods")) as { items: { metadata: { uid: string } }[] }
            ).items.map((p) => p.metadata.uid),
          );
          return bound.items.every((p) => known.has(p.metadata.uid)) ? true : undefined;
        });
        log(`[real-node] ${name}: containerd and kubelet restarted`);
      },
      memory: () => {
        const shims = processesMentioning(l.containerdSocket).filter((p) => p.cmdline.includes("containerd-shim"));
        return {
          kubeletBytes: procs.kubelet ? rssBytes(procs.kubelet.pid) : 0,
          containerdBytes: procs.containerd ? rssBytes(procs.containerd.pid) : 0,
          shimBytes: shims.reduce((n, s) => n + rssBytes(s.pid), 0),
          shims: shims.length,
        };
      },
      pids: () => [
        ...Object.values(procs)
          .filter((p) => p && !p.hasExited())
          .map((p) => (p as ManagedProcess).pid),
        ...processesMentioning(l.containerdSocket).map((p) => p.pid),
      ],
      stop: () => {
        stopping ??= (async () => {
          await apiserver?.stop();
          await teardownRealNode(l, { kube, kubeletRuns: procs.kubelet?.hasExited() === false, log });
          await Promise.all(Object.values(procs).map((p) => p?.stop(5000)));
          kube.close();
        })();
        return stopping;
      },
    };
  } catch (err) {
    await apiserver?.stop();
    await teardownRealNode(l, { log, kube }).catch(() => undefined);
    await Promise.all(Object.values(procs).map((p) => p?.stop(2000)));
    kube.close();
    throw err;
  }
}

/** Records ip_forward and adds the FORWARD rule the quirks call for, before the CNI bridge changes them. */
function recordAndChangeHost(l: NodeLayout, q: HostQuirks): void {
  const changes: HostChanges = {};
  if (!q.ipForward) changes.ipForward = "0";
  if (needsForwardRule(q)) {
    const rule = [
      "FORWARD",
      "-i",
      l.bridge,
      "-o",
      l.bridge,
      "-j",
      "ACCEPT",
      "-m",
      "comment",
      "--comment",
      `berth real node ${l.name}`,
    ];
    changes.forwardRule = rule;
    writeFileSync(l.stateFile, JSON.stringify(changes));
    execFileSyncQuiet("iptables", ["-I", ...rule]);
    return;
  }
  writeFileSync(l.stateFile, JSON.stringify(changes));
}

/**
 * The kubelet's root dir as a shared mount of the host's (the kubelet would make it one itself, but inside
 * its own namespace, where the host would not see what it mounts). And DEVICE_PLUGIN_DIR as a private
 * mount when the host's mount holding it is shared: the bind each kubelet's namespace puts on it must not
 * travel back to the host.
 */
function shareKubeletRoot(l: NodeLayout): void {
  const mounts = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => {
      const f = line.split(" ");
      return { point: f[4] ?? "", shared: line.split(" - ")[0]?.includes(" shared:") ?? false };
    });
  if (!mounts.some((m) => m.point === l.kubeletRoot)) {
    execFileSyncQuiet("mount", ["--bind", l.kubeletRoot, l.kubeletRoot]);
    execFileSyncQuiet("mount", ["--make-rshared", l.kubeletRoot]);
  }
  const holder = mounts
    .filter((m) => DEVICE_PLUGIN_DIR === m.point || DEVICE_PLUGIN_DIR.startsWith(m.point === "/" ? "/" : `${m.point}/`))
    .sort((a, b) => b.point.length - a.point.length)[0];
  if (holder?.shared && holder.point !== DEVICE_PLUGIN_DIR) {
    execFileSyncQuiet("mount", ["--bind", DEVICE_PLUGIN_DIR, DEVICE_PLUGIN_DIR]);
    execFileSyncQuiet("mount", ["--make-private", DEVICE_PLUGIN_DIR]);
  }
}

/** The kubelet's cgroupRoot must exist in every v1 hierarchy; cpuset's needs cpus and mems to hold tasks. */
function makeCgroups(l: NodeLayout, q: HostQuirks): void {
  if (q.cgroup === "v2") {
    mkdirSync(join("/sys/fs/cgroup", l.cgroupRoot), { recursive: true });
    return;
  }
  for (const h of cgroupHierarchies()) {
    const dir = join(h, l.cgroupRoot);
    mkdirSync(dir, { recursive: true });
    if (h.includes("cpuset")) {
      for (const f of ["cpuset.cpus", "cpuset.mems"]) {
        try {
          writeFileSync(join(dir, f), readFileSync(join(h, f), "utf8").trim());
        } catch {
          // a cpuset without the file (named differently on old kernels): the kubelet says so
        }
      }
    }
  }
}

function execFileSyncQuiet(cmd: string, args: string[]): void {
  execFileSync(cmd, args, { stdio: ["ignore", "ignore", "pipe"] });
}

/** A GET on the kubelet's own port (anonymous; its certificate is self-signed). */
function kubeletGet(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: "127.0.0.1", port, path, rejectUnauthorized: false, timeout: 2000, agent: false },
      (res) => {
        let text = "";
        res.on("data", (c: Buffer) => {
          text += c.toString();
        });
        res.on("end", () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`${path}: ${res.statusCode}`))));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end();
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
