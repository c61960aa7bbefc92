// The bed's real CSI driver against a real apiserver: the upstream external-provisioner provisions a claim
// of the class through the hostpath plugin, publishes CSIStorageCapacity from the plugin's figures, keeps
// a released volume's data (Retain, as Berth's pools do) and deletes it once its PV is handed back with
// reclaim policy Delete (Berth's purge); the upstream snapshot controller and csi-snapshotter cut a
// VolumeSnapshot of a claim through the plugin (a copy of its folder, refused while it is mounted
// writable), a claim restored from it gets the copy, and deleting it removes the copy; stop and a killed
// run leave nothing behind. Here no kubelet registers the plugin: the node's CSINode and topology label are
// written as the kubelet would write them.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HOSTPATH_DRIVER,
  HOSTPATH_SNAPSHOT_CLASS,
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

async function makeClaim(name: string, size: string, fromSnapshot?: string) {
  await k.json("POST", `/api/v1/namespaces/${NS}/persistentvolumeclaims`, {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name, namespace: NS },
    spec: {
      accessModes: ["ReadWriteMany"],
      storageClassName: csi?.storageClass,
      resources: { requests: { storage: size } },
      ...(fromSnapshot
        ? { dataSource: { apiGroup: "snapshot.storage.k8s.io", kind: "VolumeSnapshot", name: fromSnapshot } }
        : {}),
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

  describe("snapshots through the upstream snapshot controller and csi-snapshotter", () => {
    const SNAP = `/apis/snapshot.storage.k8s.io/v1/namespaces/${NS}/volumesnapshots`;
    const SRC = "berth-vol-snapsrcaaaaaaaaaaaaaa";
    interface Vs {
      spec: { volumeSnapshotClassName?: string };
      status?: {
        readyToUse?: boolean;
        restoreSize?: string;
        boundVolumeSnapshotContentName?: string;
        error?: { message?: string };
      };
    }
    const snapshotOf = (name: string) =>
      k.json("POST", SNAP, {
        apiVersion: "snapshot.storage.k8s.io/v1",
        kind: "VolumeSnapshot",
        metadata: { name, namespace: NS },
        spec: { source: { persistentVolumeClaimName: SRC } },
      });
    const vs = (name: string) => k.json<Vs>("GET", `${SNAP}/${name}`);
    const handleOf = async (content: string) =>
      (
        await k.json<{ status?: { snapshotHandle?: string } }>(
          "GET",
          `/apis/snapshot.storage.k8s.io/v1/volumesnapshotcontents/${content}`,
        )
      ).status?.snapshotHandle as string;
    let handle = "";

    it("cuts a VolumeSnapshot of a claim with the default class: a copy of its folder, its size, its bytes held", async () => {
      await makeClaim(SRC, "2Gi");
      const data = csi?.volumePath(`${NS}/${SRC}`) as string;
      mkdirSync(join(data, "sub"));
      writeFileSync(join(data, "sub", "notes.txt"), "before the snapshot\n");
      await snapshotOf("first");
      const ready = await until("the VolumeSnapshot ready", async () => {
        const v = await vs("first");
        return v.status?.readyToUse ? v : undefined;
      });
      expect(ready.spec.volumeSnapshotClassName).toBe(HOSTPATH_SNAPSHOT_CLASS);
      expect(ready.status?.restoreSize).toBe("2Gi");
      handle = await handleOf(ready.status?.boundVolumeSnapshotContentName as string);
      const copy = csi?.snapshotPath(handle) as string;
      expect(readFileSync(join(copy, "sub", "notes.txt"), "utf8")).toBe("before the snapshot\n");
      // The copy is its own: later writes to the volume do not reach it.
      writeFileSync(join(data, "sub", "notes.txt"), "after the snapshot\n");
      expect(readFileSync(join(copy, "sub", "notes.txt"), "utf8")).toBe("before the snapshot\n");
      // 2 GiB given to the claim, and the copy's few bytes held as a whole GiB.
      await capacityBecomes(CAPACITY_GIB - 3);
    });

    it("fills a claim restored from it with the copy", async () => {
      const pv = await makeClaim("restored", "2Gi", "first");
      expect((await k.json<Pv>("GET", `/api/v1/persistentvolumes/${pv}`)).spec.csi?.volumeHandle).toBe(
        `${NS}/restored`,
      );
      const restored = csi?.volumePath(`${NS}/restored`) as string;
      expect(readFileSync(join(restored, "sub", "notes.txt"), "utf8")).toBe("before the snapshot\n");
      await capacityBecomes(CAPACITY_GIB - 5);
    });

    it.skipIf(process.getuid?.() !== 0)(
      "refuses a claim mounted writable, naming the mount, and cuts it once nothing mounts it",
      async () => {
        // What the kubelet's NodePublishVolume leaves while a pod runs: a writable bind mount of the folder.
        const target = join(dir, "pod-target");
        mkdirSync(target);
        execFileSync("mount", ["--bind", csi?.volumePath(`${NS}/${SRC}`) as string, target]);
        try {
          await snapshotOf("while-mounted");
          const refused = await until(
            "the VolumeSnapshot's error",
            async () => (await vs("while-mounted")).status?.error,
          );
          expect(refused.message).toContain(`mounted writable at ${target}`);
          expect((await vs("while-mounted")).status?.readyToUse).not.toBe(true);
        } finally {
          execFileSync("umount", [target]);
        }
        // The sidecars retry; with the mount gone the plugin cuts it.
        await until("the VolumeSnapshot ready once unmounted", async () =>
          (await vs("while-mounted")).status?.readyToUse ? true : undefined,
        );
        await k.json("DELETE", `${SNAP}/while-mounted`);
        await until("the VolumeSnapshot gone", async () =>
          (await k.raw("GET", `${SNAP}/while-mounted`)).status === 404 ? true : undefined,
        );
      },
    );

    it("deleting the VolumeSnapshot (class policy Delete) removes the copy and gives its bytes back", async () => {
      await k.json("DELETE", `${SNAP}/first`);
      await until("the VolumeSnapshot gone", async () =>
        (await k.raw("GET", `${SNAP}/first`)).status === 404 ? true : undefined,
      );
      await until("the copy removed", async () => (existsSync(csi?.snapshotPath(handle) as string) ? undefined : true));
      await capacityBecomes(CAPACITY_GIB - 4);
    });
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
