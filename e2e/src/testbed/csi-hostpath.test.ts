// The bed's real CSI driver against a real apiserver: the upstream external-provisioner provisions a claim
// of the class through the hostpath plugin, publishes CSIStorageCapacity from the plugin's figures, keeps
// a released volume's data (Retain, as Berth's pools do) and deletes it once its PV is handed back with
// reclaim policy Delete (Berth's purge); stop and a killed run leave nothing behind. Here no kubelet
// registers the plugin: the node's CSINode and topology label are written as the kubelet would write them.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HOSTPATH_DRIVER,
  HOSTPATH_TOPOLOGY_KEY,
  mountsOf,
  type RunningCsiHostpath,
  startCsiHostpath,
} from "./csi-hostpath.ts";
import { startFleet } from "./fleet.ts";
import { KubeHttp } from "./kube.ts";
import type { Cluster, Fleet } from "./types.ts";

const NODE = "storage-0";
const NS = "berth-sessions";
const CLAIM = "berth-vol-aaaaaaaaaaaaaaaaaaaa";
const CAPACITY_GIB = 10;

let fleet: Fleet;
let c: Cluster;
let k: KubeHttp;
let csi: RunningCsiHostpath | undefined;
const dir = join(tmpdir(), `berth-csi-hostpath-${process.pid}`);

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > deadline)
      throw new Error(
        `${what}: not within ${ms} ms\n${csi?.processes.map((p) => `${p.name}:\n${p.tail(10)}`).join("\n")}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Pv {
  metadata: { name: string };
  spec: {
    csi?: { volumeHandle: string };
    persistentVolumeReclaimPolicy?: string;
    claimRef?: { name: string };
    capacity?: { storage: string };
    nodeAffinity?: unknown;
  };
  status?: { phase?: string };
}

const pvsOfClaim = async (claim: string) =>
  (await k.json<{ items: Pv[] }>("GET", "/api/v1/persistentvolumes")).items.filter(
    (pv) => pv.spec.claimRef?.name === claim,
  );

async function makeClaim(name: string, size: string) {
  await k.json("POST", `/api/v1/namespaces/${NS}/persistentvolumeclaims`, {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name, namespace: NS },
    spec: {
      accessModes: ["ReadWriteMany"],
      storageClassName: csi?.storageClass,
      resources: { requests: { storage: size } },
    },
  });
  return until(`claim ${name} bound`, async () => {
    const pvc = await k.json<{ spec: { volumeName?: string }; status?: { phase?: string } }>(
      "GET",
      `/api/v1/namespaces/${NS}/persistentvolumeclaims/${name}`,
    );
    return pvc.status?.phase === "Bound" ? pvc.spec.volumeName : undefined;
  });
}

/** The class's published capacity in GiB, once it equals `gib`. */
const capacityBecomes = (gib: number) =>
  until(`the class's capacity at ${gib}Gi`, async () => {
    const list = await k.json<{ items: { storageClassName: string; capacity?: string; nodeTopology?: unknown }[] }>(
      "GET",
      "/apis/storage.k8s.io/v1/namespaces/kube-system/csistoragecapacities",
    );
    const mine = list.items.filter((i) => i.storageClassName === csi?.storageClass);
    return mine.length === 1 && mine[0]?.capacity === `${gib}Gi` ? mine[0] : undefined;
  });

beforeAll(async () => {
  fleet = await startFleet({ clusters: [{ name: "gpu", kind: "gpu", nodes: [] }] });
  c = fleet.cluster("gpu");
  k = new KubeHttp({ server: c.server, caPem: c.caPem, token: c.adminToken });
  await k.json("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  // What a kubelet writes once the registrar has registered the plugin: the node's topology label and its
  // CSINode entry (the provisioner reads both to place a volume and to ask for capacity).
  const node = await k.json<{ metadata: { uid: string } }>("POST", "/api/v1/nodes", {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: NODE, labels: { [HOSTPATH_TOPOLOGY_KEY]: NODE } },
  });
  await k.json("POST", "/apis/storage.k8s.io/v1/csinodes", {
    apiVersion: "storage.k8s.io/v1",
    kind: "CSINode",
    metadata: { name: NODE, ownerReferences: [{ apiVersion: "v1", kind: "Node", name: NODE, uid: node.metadata.uid }] },
    spec: { drivers: [{ name: HOSTPATH_DRIVER, nodeID: NODE, topologyKeys: [HOSTPATH_TOPOLOGY_KEY] }] },
  });
  csi = await startCsiHostpath({ cluster: c, nodeName: NODE, dir, capacityGib: CAPACITY_GIB, capacityPollSeconds: 1 });
}, 600_000);

afterAll(async () => {
  await csi?.stop();
  k?.close();
  await fleet?.stop();
});

describe("the hostpath driver on a bed cluster, without a kubelet", () => {
  it("publishes the class's capacity from the plugin", async () => {
    const cap = await capacityBecomes(CAPACITY_GIB);
    expect(cap.nodeTopology).toEqual({ matchLabels: { [HOSTPATH_TOPOLOGY_KEY]: NODE } });
  });

  it("provisions a claim of the class: a folder named after the claim, tied to the node, capacity taken", async () => {
    const t0 = Date.now();
    const pvName = await makeClaim(CLAIM, "2Gi");
    console.log(`provision: claim created → Bound in ${Date.now() - t0} ms`);
    const pv = await k.json<Pv>("GET", `/api/v1/persistentvolumes/${pvName}`);
    expect(pv.spec.csi?.volumeHandle).toBe(`${NS}/${CLAIM}`);
    expect(pv.spec.persistentVolumeReclaimPolicy).toBe("Retain");
    expect(pv.spec.capacity?.storage).toBe("2Gi");
    expect(JSON.stringify(pv.spec.nodeAffinity)).toContain(NODE);
    expect(existsSync(csi?.volumePath(`${NS}/${CLAIM}`) as string)).toBe(true);
    await capacityBecomes(CAPACITY_GIB - 2);
  });

  it("refuses a claim larger than what is left, and says so on the claim", async () => {
    await k.json("POST", `/api/v1/namespaces/${NS}/persistentvolumeclaims`, {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "too-big", namespace: NS },
      spec: {
        accessModes: ["ReadWriteMany"],
        storageClassName: csi?.storageClass,
        resources: { requests: { storage: `${CAPACITY_GIB}Gi` } },
      },
    });
    const event = await until("a ProvisioningFailed event", async () => {
      const list = await k.json<{ items: { reason: string; message: string; involvedObject: { name: string } }[] }>(
        "GET",
        `/api/v1/namespaces/${NS}/events`,
      );
      return list.items.find((e) => e.involvedObject.name === "too-big" && e.reason === "ProvisioningFailed");
    });
    expect(event.message).toContain("free");
    await k.json("DELETE", `/api/v1/namespaces/${NS}/persistentvolumeclaims/too-big`);
  });

  it("keeps a released claim's data (Retain) for the claim made again, and removes it once purged", async () => {
    const data = csi?.volumePath(`${NS}/${CLAIM}`) as string;
    writeFileSync(join(data, "notes.txt"), "kept\n");
    await k.json("DELETE", `/api/v1/namespaces/${NS}/persistentvolumeclaims/${CLAIM}`);
    const released = await until("the PV released", async () => {
      const pvs = await pvsOfClaim(CLAIM);
      return pvs.length === 1 && pvs[0]?.status?.phase === "Released" ? pvs[0] : undefined;
    });
    expect(readFileSync(join(data, "notes.txt"), "utf8")).toBe("kept\n");
    // The claim made again (the volume's next session) gets a new PV on the same data.
    const again = await makeClaim(CLAIM, "2Gi");
    expect(again).not.toBe(released.metadata.name);
    expect((await k.json<Pv>("GET", `/api/v1/persistentvolumes/${again}`)).spec.csi?.volumeHandle).toBe(
      `${NS}/${CLAIM}`,
    );
    expect(readFileSync(join(data, "notes.txt"), "utf8")).toBe("kept\n");
    await capacityBecomes(CAPACITY_GIB - 2);
    // The purge: the claim goes, and its PVs are handed back with reclaim policy Delete.
    await k.json("DELETE", `/api/v1/namespaces/${NS}/persistentvolumeclaims/${CLAIM}`);
    for (const pv of await pvsOfClaim(CLAIM))
      await k.json(
        "PATCH",
        `/api/v1/persistentvolumes/${pv.metadata.name}`,
        { spec: { persistentVolumeReclaimPolicy: "Delete" } },
        "application/merge-patch+json",
      );
    await until("the PVs deleted by the provisioner", async () =>
      (await pvsOfClaim(CLAIM)).length === 0 ? true : undefined,
    );
    expect(existsSync(data)).toBe(false);
    await capacityBecomes(CAPACITY_GIB);
  });

  it("stops leaving no process, folder or capacity object behind; a start after a kill clears what was left", async () => {
    const first = csi as RunningCsiHostpath;
    const pids = first.processes.map((p) => p.pid);
    // A killed run: its processes die without stop(); the next start tears down what they left.
    for (const p of first.processes) process.kill(-p.pid, "SIGKILL");
    await Promise.all(first.processes.map((p) => p.exited));
    csi = await startCsiHostpath({
      cluster: c,
      nodeName: NODE,
      dir,
      capacityGib: CAPACITY_GIB,
      capacityPollSeconds: 1,
    });
    await capacityBecomes(CAPACITY_GIB);
    const second = csi;
    await second.stop();
    csi = undefined;
    for (const pid of [...pids, ...second.processes.map((p) => p.pid)]) expect(existsSync(`/proc/${pid}`)).toBe(false);
    expect(existsSync(dir)).toBe(false);
    expect(mountsOf(dir)).toEqual([]);
    const left = await k.json<{ items: { storageClassName: string }[] }>(
      "GET",
      "/apis/storage.k8s.io/v1/namespaces/kube-system/csistoragecapacities",
    );
    expect(left.items.filter((i) => i.storageClassName === second.storageClass)).toEqual([]);
  });
});
