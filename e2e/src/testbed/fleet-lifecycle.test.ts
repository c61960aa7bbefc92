import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { fleetConfig } from "../../fleet.config.ts";
import { startFleet } from "./fleet.ts";
import { kubeConfigFrom } from "./kubeconfig.ts";
import { isAlive, listeningPorts, listeningPortsOf, processesMentioning } from "./procfs.ts";
import type { Fleet } from "./types.ts";

let fleet: Fleet;

beforeAll(async () => {
  fleet = await startFleet(fleetConfig);
});

afterAll(async () => {
  await fleet?.stop();
});

describe("the local fleet", () => {
  test("runs mgmt, gpu-a with two 8×H100 nodes and gpu-b with two 4×L4 nodes, each on its own loopback port", async () => {
    expect(fleet.clusters.map((c) => [c.name, c.kind])).toEqual([
      ["mgmt", "management"],
      ["gpu-a", "gpu"],
      ["gpu-b", "gpu"],
    ]);
    const gpus = async (name: string) => {
      const nodes = await kubeConfigFrom(fleet.cluster(name).kubeconfig).makeApiClient(CoreV1Api).listNode();
      return nodes.items.map((n) => [
        n.metadata?.labels?.["nvidia.com/gpu.product"],
        n.status?.allocatable?.["nvidia.com/gpu"],
      ]);
    };
    expect(await gpus("mgmt")).toEqual([]);
    // gpu-a runs HAMi: nvidia.com/gpu counts vGPUs (8 cards × 10).
    expect(await gpus("gpu-a")).toEqual([
      ["NVIDIA-H100-80GB-HBM3", "80"],
      ["NVIDIA-H100-80GB-HBM3", "80"],
    ]);
    expect(await gpus("gpu-b")).toEqual([
      ["NVIDIA-L4", "4"],
      ["NVIDIA-L4", "4"],
    ]);
    const servers = fleet.clusters.map((c) => new URL(c.server));
    expect(servers.every((u) => u.hostname === "127.0.0.1")).toBe(true);
    expect(new Set(servers.map((u) => u.port)).size).toBe(3);
    expect(fleet.cluster("gpu-a").kwokPort).not.toBe(fleet.cluster("gpu-b").kwokPort);
  });

  test("reports a start duration for every component of every cluster", () => {
    const components = (cluster: string) =>
      fleet.timings
        .filter((t) => t.cluster === cluster)
        .map((t) => t.component)
        .sort();
    expect(components("mgmt")).toEqual(["cluster", "etcd", "kube-apiserver", "kube-controller-manager"]);
    expect(components("gpu-a")).toEqual([
      "cluster",
      "etcd",
      "kube-apiserver",
      "kube-controller-manager",
      "kube-scheduler",
      "kwok",
      "nodes-ready",
    ]);
    expect(fleet.timings.every((t) => t.durationMs >= 0 && t.startedAtMs >= 0)).toBe(true);
  });

  test("stopping the fleet leaves no process and no listening port", async () => {
    const pids = fleet.pids();
    expect(pids).toHaveLength(3 + 5 + 5);
    const ports = listeningPortsOf(pids);
    // etcd (client, peer) ×3, apiserver ×3, kwok ×2 at least
    expect(ports.size).toBeGreaterThanOrEqual(11);
    for (const c of fleet.clusters) expect(ports).toContain(Number(new URL(c.server).port));

    await fleet.stop();

    expect(pids.filter(isAlive)).toEqual([]);
    expect(processesMentioning(fleet.dataDir)).toEqual([]);
    const stillListening = listeningPorts();
    expect([...ports].filter((p) => stillListening.has(p))).toEqual([]);
    expect(fleet.pids()).toEqual([]);
  });
});
