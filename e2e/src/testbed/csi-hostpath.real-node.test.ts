// The bed's CSI driver on the real node: the registrar registers the plugin with the real kubelet, the
// external-provisioner provisions a claim and publishes the node's capacity, a real container writes into
// the mounted claim, and after its pod is gone a second pod mounting the same claim reads the file back.
// Runs where canRunRealNode() says yes (root, containerd installable: CI).
import { existsSync, readFileSync } from "node:fs";
import { get } from "node:https";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { findNodeBinaries } from "./binaries.ts";
import {
  findCsiBinaries,
  HOSTPATH_DRIVER,
  HOSTPATH_TOPOLOGY_KEY,
  mountsOf,
  type RunningCsiHostpath,
  startCsiHostpath,
} from "./csi-hostpath.ts";
import { startFleet } from "./fleet.ts";
import { KubeHttp } from "./kube.ts";
import { canRunRealNode, ociArchive, REAL_NODE_TAINT, type RealNode, startRealNode } from "./real-node/index.ts";
import type { Fleet } from "./types.ts";
import { eventually } from "./waiting.test-support.ts";

// A name of its own: a fleet's real node, or another test's, may run on this host at the same time.
const NODE_NAME = "csi-hostpath-test";
const can = canRunRealNode();
const NS = "berth-sessions";
const CLAIM = "berth-vol-bbbbbbbbbbbbbbbbbbbb";
const CAPACITY_GIB = 20;
// A fully qualified name, imported into the node's image store (never pulled).
const PROBE = "bed.berth.local/volume-probe:1";

interface PodView {
  spec: { nodeName?: string };
  status: {
    phase?: string;
    containerStatuses?: { ready: boolean; state?: { terminated?: { message?: string } } }[];
  };
}

interface Summary {
  pods: {
    podRef: { name: string };
    volume?: { pvcRef?: { name: string }; capacityBytes?: number; usedBytes?: number }[];
  }[];
}

/** The kubelet's stats summary, read directly (it serves loopback only, to anyone, with its own certificate). */
function summaryOf(port: number): Promise<Summary> {
  return new Promise((resolve, reject) => {
    get(`https://127.0.0.1:${port}/stats/summary`, { rejectUnauthorized: false }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => {
        body += c.toString();
      });
      res.on("end", () => (res.statusCode === 200 ? resolve(JSON.parse(body)) : reject(new Error(body))));
    }).on("error", reject);
  });
}

describe.skipIf(!can.ok)(`the hostpath CSI driver on a real node${can.ok ? "" : ` (skipped: ${can.reason})`}`, () => {
  let fleet: Fleet;
  let node: RealNode;
  let csi: RunningCsiHostpath | undefined;
  let kube: KubeHttp;
  let dir: string;
  const figures: string[] = [];

  beforeAll(async () => {
    const nodeBin = findNodeBinaries();
    const csiBin = findCsiBinaries();
    fleet = await startFleet({ clusters: [{ name: "gpu-b", kind: "gpu", nodes: [] }] });
    const gpu = fleet.cluster("gpu-b");
    kube = new KubeHttp({ server: gpu.server, caPem: gpu.caPem, token: gpu.adminToken });
    node = await startRealNode({ cluster: gpu, name: NODE_NAME, gpuModel: "NVIDIA-L4", gpuCount: 1, binDir: nodeBin });
    await node.importImage(
      ociArchive(PROBE, {
        files: [{ path: "volume-probe", content: join(csiBin, "volume-probe") }],
        entrypoint: ["/volume-probe"],
      }),
    );
    dir = join(node.layout.base, "csi-hostpath");
    csi = await startCsiHostpath({
      cluster: gpu,
      nodeName: node.name,
      kubeletRootDir: node.layout.kubeletRoot,
      dir,
      capacityGib: CAPACITY_GIB,
      capacityPollSeconds: 1,
      binDir: csiBin,
    });
    figures.push(`plugin registered with the kubelet ${csi.registeredMs} ms after start`);
    await kube.json("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  }, 900_000);

  afterAll(async () => {
    for (const p of ["writer", "reader"])
      await kube?.raw("DELETE", `/api/v1/namespaces/${NS}/pods/${p}?gracePeriodSeconds=0`).catch(() => undefined);
    await csi?.stop();
    await node?.stop();
    kube?.close();
    await fleet?.stop();
    if (figures.length > 0) console.log(`[csi-hostpath figures]\n${figures.join("\n")}`);
  }, 120_000);

  const podWith = (name: string, args: string[], restartPolicy = "Always") =>
    kube.json("POST", `/api/v1/namespaces/${NS}/pods`, {
      metadata: { name },
      spec: {
        restartPolicy,
        // The volume ties the pod to the real node (topology), which takes only pods meant for it.
        tolerations: [{ ...REAL_NODE_TAINT, operator: "Equal" }],
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: "app",
            image: PROBE,
            imagePullPolicy: "Never",
            args,
            volumeMounts: [{ name: "work", mountPath: "/home/jovyan/work" }],
          },
        ],
        volumes: [{ name: "work", persistentVolumeClaim: { claimName: CLAIM } }],
      },
    });
  // On a timeout the error carries the namespace's events (the scheduler's and the kubelet's words).
  const running = (name: string) =>
    eventually(
      async () => {
        const p = await kube.json<PodView>("GET", `/api/v1/namespaces/${NS}/pods/${name}`);
        return p.status.phase === "Running" && p.status.containerStatuses?.[0]?.ready ? p : undefined;
      },
      { what: `pod ${name} Running`, timeoutMs: 90_000 },
    ).catch(async (err: Error) => {
      const ev = await kube.json<{ items: { reason: string; message: string; involvedObject: { name: string } }[] }>(
        "GET",
        `/api/v1/namespaces/${NS}/events`,
      );
      throw new Error(
        `${err.message}\n${ev.items.map((e) => `${e.involvedObject.name} ${e.reason}: ${e.message}`).join("\n")}`,
      );
    });
  const gone = (name: string) =>
    eventually(
      async () => ((await kube.raw("GET", `/api/v1/namespaces/${NS}/pods/${name}`)).status === 404 ? true : undefined),
      { what: `pod ${name} gone`, timeoutMs: 60_000 },
    );

  test("the kubelet registers the plugin, and the node's capacity is published from the plugin", async () => {
    const csiNode = await kube.json<{ spec: { drivers: { name: string; nodeID: string; topologyKeys: string[] }[] } }>(
      "GET",
      `/apis/storage.k8s.io/v1/csinodes/${node.name}`,
    );
    expect(csiNode.spec.drivers).toContainEqual({
      name: HOSTPATH_DRIVER,
      nodeID: node.name,
      topologyKeys: [HOSTPATH_TOPOLOGY_KEY],
    });
    const cap = await eventually(
      async () => {
        const list = await kube.json<{
          items: { storageClassName: string; capacity?: string; nodeTopology?: unknown }[];
        }>("GET", "/apis/storage.k8s.io/v1/namespaces/kube-system/csistoragecapacities");
        return list.items.find((i) => i.storageClassName === csi?.storageClass && i.capacity === `${CAPACITY_GIB}Gi`);
      },
      { what: "the node's CSIStorageCapacity", timeoutMs: 60_000 },
    );
    expect(cap.nodeTopology).toEqual({ matchLabels: { [HOSTPATH_TOPOLOGY_KEY]: node.name } });
  });

  test("a claim is provisioned on the node; a container writes into it; a second pod reads it back", async () => {
    let t = performance.now();
    await kube.json("POST", `/api/v1/namespaces/${NS}/persistentvolumeclaims`, {
      metadata: { name: CLAIM },
      spec: {
        accessModes: ["ReadWriteMany"],
        storageClassName: csi?.storageClass,
        resources: { requests: { storage: "5Gi" } },
      },
    });
    await eventually(
      async () => {
        const pvc = await kube.json<{ status?: { phase?: string } }>(
          "GET",
          `/api/v1/namespaces/${NS}/persistentvolumeclaims/${CLAIM}`,
        );
        return pvc.status?.phase === "Bound" ? true : undefined;
      },
      { what: "the claim bound", timeoutMs: 60_000 },
    );
    figures.push(`provision: claim created → Bound ${Math.round(performance.now() - t)} ms`);

    t = performance.now();
    await podWith("writer", ["write", "/home/jovyan/work/notes.txt", "written on the real node"]);
    const writer = await running("writer");
    figures.push(`mount: pod with the claim created → Running ${Math.round(performance.now() - t)} ms`);
    expect(writer.spec.nodeName).toBe(node.name);
    const onHost = join(csi?.volumePath(`${NS}/${CLAIM}`) as string, "notes.txt");
    expect(readFileSync(onHost, "utf8")).toBe("written on the real node");
    expect(mountsOf(dir).length).toBe(1);
    // The plugin's NodeGetVolumeStats, as the kubelet serves it to the operator's volume-sync tick: the
    // claim's size and what the file takes. The kubelet measures volumes about once a minute.
    const stats = await eventually(
      async () => {
        const s = await summaryOf(node.kubeletPort);
        const v = s.pods.find((p) => p.podRef.name === "writer")?.volume?.find((x) => x.pvcRef?.name === CLAIM);
        return v?.usedBytes ? v : undefined;
      },
      { what: "the claim's stats in the kubelet's summary", timeoutMs: 150_000, intervalMs: 1000 },
    );
    expect(stats.capacityBytes).toBe(5 * 1024 ** 3);
    expect(stats.usedBytes).toBe("written on the real node".length);

    await kube.json("DELETE", `/api/v1/namespaces/${NS}/pods/writer`);
    await gone("writer");
    // The kubelet unpublished the volume: no bind mount of it is left.
    await eventually(async () => (mountsOf(dir).length === 0 ? true : undefined), { what: "the mount gone" });

    t = performance.now();
    await podWith("reader", ["read", "/home/jovyan/work/notes.txt"], "Never");
    // What it read comes back as its termination message, which the kubelet writes into the pod's status.
    const said = await eventually(
      async () => {
        const p = await kube.json<PodView>("GET", `/api/v1/namespaces/${NS}/pods/reader`);
        return p.status.phase === "Succeeded" ? p.status.containerStatuses?.[0]?.state?.terminated?.message : undefined;
      },
      { what: "the reader done", timeoutMs: 90_000 },
    );
    figures.push(`second pod on the same claim: created → read and done ${Math.round(performance.now() - t)} ms`);
    expect(said).toBe("read /home/jovyan/work/notes.txt: written on the real node");
    await kube.json("DELETE", `/api/v1/namespaces/${NS}/pods/reader`);
    await gone("reader");
  }, 400_000);

  test("deleting the claim keeps the data (Retain, Berth's pools); a purge (reclaim policy Delete) removes it", async () => {
    const data = csi?.volumePath(`${NS}/${CLAIM}`) as string;
    await kube.json("DELETE", `/api/v1/namespaces/${NS}/persistentvolumeclaims/${CLAIM}`);
    const pv = await eventually(
      async () => {
        const pvs = await kube.json<{
          items: { metadata: { name: string }; spec: { claimRef?: { name: string } }; status?: { phase?: string } }[];
        }>("GET", "/api/v1/persistentvolumes");
        return pvs.items.find((p) => p.spec.claimRef?.name === CLAIM && p.status?.phase === "Released");
      },
      { what: "the PV released" },
    );
    expect(existsSync(join(data, "notes.txt"))).toBe(true);
    await kube.json(
      "PATCH",
      `/api/v1/persistentvolumes/${pv.metadata.name}`,
      { spec: { persistentVolumeReclaimPolicy: "Delete" } },
      "application/merge-patch+json",
    );
    await eventually(
      async () =>
        (await kube.raw("GET", `/api/v1/persistentvolumes/${pv.metadata.name}`)).status === 404 ? true : undefined,
      { what: "the PV deleted by the provisioner" },
    );
    expect(existsSync(data)).toBe(false);
  }, 120_000);

  test("stop leaves no process, mount or folder of the driver behind", async () => {
    const running = csi as RunningCsiHostpath;
    await running.stop();
    csi = undefined;
    for (const p of running.processes) expect(existsSync(`/proc/${p.pid}`)).toBe(false);
    expect(mountsOf(dir)).toEqual([]);
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(join(node.layout.kubeletRoot, "plugins_registry", `${HOSTPATH_DRIVER}-reg.sock`))).toBe(false);
  });
});
