// The bed's real node: a real kubelet and containerd joined to a GPU cluster next to its kwok nodes, with
// a fake GPU device plugin. Runs where canRunRealNode() says yes (root, containerd installable: CI).
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { findNodeBinaries } from "./binaries.ts";
import { startFleet } from "./fleet.ts";
import { KubeHttp } from "./kube.ts";
import { listeningPorts } from "./procfs.ts";
import {
  canRunRealNode,
  leftovers,
  pushFileImage,
  REAL_NODE_TAINT,
  type RealNode,
  startRealNode,
  teardownRealNode,
} from "./real-node/index.ts";
import { RUN_ROOT } from "./real-node/layout.ts";
import { type LocalRegistry, startRegistry } from "./registry.ts";
import type { Fleet } from "./types.ts";
import { eventually } from "./waiting.test-support.ts";

const run = promisify(execFile);
const L4 = "NVIDIA-L4";
const can = canRunRealNode();

interface PodView {
  metadata: { name: string };
  spec: { nodeName?: string };
  status: {
    phase?: string;
    podIP?: string;
    containerStatuses?: {
      ready: boolean;
      restartCount: number;
      containerID?: string;
      state?: { waiting?: { reason?: string; message?: string }; running?: { startedAt: string } };
    }[];
  };
}

describe.skipIf(!can.ok)(`a real node on a GPU cluster of the bed${can.ok ? "" : ` (skipped: ${can.reason})`}`, () => {
  let fleet: Fleet;
  let registry: LocalRegistry;
  let node: RealNode;
  let kube: KubeHttp;
  let appImage: string;
  const figures: string[] = [];

  beforeAll(async () => {
    const binDir = findNodeBinaries();
    [fleet, registry] = await Promise.all([
      startFleet({
        clusters: [
          {
            name: "gpu-b",
            kind: "gpu",
            nodes: [{ name: "gpu-b-l4-1", gpuModel: L4, gpuCount: 4 }],
            gpuRuntimeClass: true,
            gpuDevicePlugin: true,
          },
        ],
      }),
      startRegistry(),
    ]);
    const gpu = fleet.cluster("gpu-b");
    kube = new KubeHttp({ server: gpu.server, caPem: gpu.caPem, token: gpu.adminToken });
    // A name of its own: a fleet's real node (gpu-b-real-1) may run on this host at the same time.
    node = await startRealNode({
      cluster: gpu,
      name: "real-node-test",
      gpuModel: L4,
      gpuCount: 2,
      gpuMemoryMib: 23034,
      registries: [registry.host],
      binDir,
    });
    figures.push(
      `node Ready ${node.timings.nodeReadyMs} ms after the kubelet started; GPUs allocatable at ${node.timings.gpuAllocatableMs} ms`,
    );
    // A static program as the whole image, pushed to the bed's registry: the kubelet pulls it from there.
    appImage = (
      await pushFileImage(registry.url, "bed/app", "1", {
        files: [{ path: "bed-app", content: join(binDir, "bed-app") }],
        entrypoint: ["/bed-app"],
        cmd: ["serve", "8080"],
      })
    ).ref;
  }, 900_000);

  afterAll(async () => {
    await node?.stop();
    kube?.close();
    await Promise.all([registry?.stop(), fleet?.stop()]);
    if (figures.length > 0) console.log(`[real-node figures]\n${figures.join("\n")}`);
  }, 120_000);

  const createPod = (name: string, image: string) =>
    kube.json("POST", "/api/v1/namespaces/default/pods", {
      metadata: { name },
      spec: {
        nodeSelector: { "berth.dev/real-node": "true" },
        tolerations: [{ ...REAL_NODE_TAINT, operator: "Equal" }],
        runtimeClassName: "nvidia",
        terminationGracePeriodSeconds: 1,
        containers: [{ name: "app", image, resources: { limits: { "nvidia.com/gpu": "1" } } }],
      },
    });
  const pod = (name: string) => kube.json<PodView>("GET", `/api/v1/namespaces/default/pods/${name}`);
  const running = (name: string) =>
    eventually(
      async () => {
        const p = await pod(name);
        return p.status.phase === "Running" && p.status.containerStatuses?.[0]?.ready ? p : undefined;
      },
      { what: `pod ${name} Running`, timeoutMs: 60_000 },
    );
  const kubectl = (...args: string[]) =>
    run("kubectl", ["--kubeconfig", fleet.cluster("gpu-b").kubeconfigPath, ...args]);

  test("it joins Ready next to the kwok nodes, with the fake GPUs allocatable and labels that say they are fake", async () => {
    const n = await kube.json<{
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      spec: { taints?: { key: string; value?: string; effect: string }[] };
      status: {
        allocatable: Record<string, string>;
        addresses: { type: string; address: string }[];
        nodeInfo: { kubeletVersion: string; containerRuntimeVersion: string };
      };
    }>("GET", `/api/v1/nodes/${node.name}`);
    expect(n.status.allocatable["nvidia.com/gpu"]).toBe("2");
    expect(n.metadata.labels).toMatchObject({
      "berth.dev/real-node": "true",
      "berth.dev/gpu": "fake",
      "nvidia.com/gpu.product": L4,
      "nvidia.com/gpu.count": "2",
    });
    expect(n.metadata.annotations["berth.dev/gpu-uuids"]).toBe(node.gpuIds.join(","));
    // Only pods meant for it land there; the uninitialized taint of an external cloud provider is lifted.
    expect(n.spec.taints).toEqual([REAL_NODE_TAINT]);
    expect(n.status.addresses.find((a) => a.type === "InternalIP")?.address).toBe("127.0.0.1");
    expect(n.status.nodeInfo.kubeletVersion).toBe("v1.37.1");
    expect(n.status.nodeInfo.containerRuntimeVersion).toMatch(/^containerd:\/\//);
    const nodes = await kube.json<{ items: { metadata: { name: string } }[] }>("GET", "/api/v1/nodes");
    expect(nodes.items.map((i) => i.metadata.name).sort()).toEqual(["gpu-b-l4-1", node.name].sort());
  });

  test("a 1-GPU pod of the nvidia runtime class, pulled from the bed's registry, really runs: its stdout through pods/log, exec, its IP from the host", async () => {
    const t = performance.now();
    await createPod("app", appImage);
    const p = await running("app");
    figures.push(
      `pod create → Running (image pulled from the bed's registry): ${Math.round(performance.now() - t)} ms`,
    );
    expect(p.spec.nodeName).toBe(node.name);
    const logs = await eventually(
      async () => {
        const text = (await kube.raw("GET", "/api/v1/namespaces/default/pods/app/log")).text;
        return text.includes("serving on") ? text : undefined;
      },
      { what: "the container's stdout" },
    );
    expect(logs).toMatch(/^bed-app app: serving on 0\.0\.0\.0:8080$/m);
    // The device plugin's Allocate named one of the node's fake cards.
    const visible = /^NVIDIA_VISIBLE_DEVICES=(.*)$/m.exec(logs)?.[1];
    expect(node.gpuIds).toContain(visible);
    const { stdout } = await kubectl("exec", "app", "--", "/bed-app", "echo", "hello", "from", "exec");
    expect(stdout).toBe("hello from exec\n");
    expect(p.status.podIP?.startsWith(node.podCidr.replace(/\.0\/24$/, "."))).toBe(true);
    const res = await fetch(`http://${p.status.podIP}:8080/`);
    expect(await res.text()).toBe("bed-app app\n");
    const after = (await kube.raw("GET", "/api/v1/namespaces/default/pods/app/log")).text;
    expect(after).toContain("GET /");
    const m = node.memory();
    figures.push(
      `idle memory: kubelet ${mib(m.kubeletBytes)} MiB, containerd ${mib(m.containerdBytes)} MiB, ${m.shims} shim(s) ${mib(m.shimBytes)} MiB`,
    );
  });

  test("restarting containerd and the kubelet keeps the container running", async () => {
    const before = (await pod("app")).status;
    await node.restartRuntime();
    const after = await running("app");
    expect(after.status.containerStatuses?.[0]?.containerID).toBe(before.containerStatuses?.[0]?.containerID);
    expect(after.status.containerStatuses?.[0]?.restartCount).toBe(0);
    // The new kubelet and containerd know the container: exec goes through both.
    expect((await kubectl("exec", "app", "--", "/bed-app", "echo", "still", "here")).stdout).toBe("still here\n");
    expect(await (await fetch(`http://${after.status.podIP}:8080/`)).text()).toBe("bed-app app\n");
  });

  test("an image that cannot be pulled shows the kubelet's reason on the pod", async () => {
    await createPod("missing", `${registry.host}/bed/missing:1`);
    const waiting = await eventually(
      async () => {
        const w = (await pod("missing")).status.containerStatuses?.[0]?.state?.waiting;
        return w?.reason === "ErrImagePull" || w?.reason === "ImagePullBackOff" ? w : undefined;
      },
      { what: "ErrImagePull", timeoutMs: 60_000 },
    );
    expect(waiting.message).toContain("bed/missing:1");
  });

  test("a teardown after a kill leaves no process, mount, network namespace, link or cgroup behind", async () => {
    // What a killed run leaves: containers, shims, mounts and the bridge, with no kubelet or containerd.
    for (const p of leftovers(node.layout).processes)
      if (/(^|\/)(kubelet|containerd|fake-gpu-plugin)$/.test(p.cmdline.split(" ")[0] ?? ""))
        process.kill(p.pid, "SIGKILL");
    const left = leftovers(node.layout);
    expect(left.processes.length).toBeGreaterThan(0);
    expect(left.mounts.some((m) => m.includes("/netns/"))).toBe(true);
    expect(left.links).toContain(node.layout.bridge);
    expect(left.cgroups.length).toBeGreaterThan(0);
    await teardownRealNode(node.layout);
    expect(leftovers(node.layout)).toEqual({ processes: [], mounts: [], links: [], cgroups: [] });
    expect(existsSync(node.layout.base)).toBe(false);
    expect(existsSync(node.layout.run)).toBe(false);
    expect(listeningPorts().has(node.kubeletPort)).toBe(false);
    // and the host settings are back as they were
    // (unless a real node of another run still runs here: it inherits the value to put back)
    if (!node.quirks.ipForward && readdirSync(RUN_ROOT).length === 0)
      expect(readFileSync("/proc/sys/net/ipv4/ip_forward", "utf8").trim()).toBe("0");
  });
});

const mib = (b: number) => (b / 1024 / 1024).toFixed(0);
