// The volume-sync tick against a real kube-apiserver of the bed: a storage class whose driver publishes no
// CSIStorageCapacity is read from the driver's volume stats of a mounted claim (the node's kubelet stats
// summary), the capacity objects win once the driver publishes
// them, and the last volume-stats figure is kept (saying when it was measured) after the session ends.
// The summary is read from the stand-in kubelet directly (e2e/src/storage/bed-kubelet-stats.ts says why);
// the pods, claims and capacity objects are the apiserver's.
import { HttpKube } from "@berth/controllers/kube";
import { LABELS } from "@berth/crds";
import type { StorageReport } from "@berth/crds/internal-plane";
import { type Fleet, kubeConfigFrom, startFleet } from "@berth/e2e";
import { installBedStorage } from "@berth/e2e/storage";
import { type KubeletStats, startKubeletStats } from "@berth/e2e/storage/kubelet-stats";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StorageReporter } from "./reporter.ts";

const CLASS = "berth-nfs";
const NS = "berth-sessions";
const CLAIM = "berth-vol-aaaaaaaaaaaaaaaaaaaa";
const GiB = 1024 ** 3;

let fleet: Fleet;
let kube: HttpKube;
let stats: KubeletStats | undefined;
const sent: StorageReport[] = [];
let reporter: StorageReporter;

beforeAll(async () => {
  fleet = await startFleet({ clusters: [{ name: "gpu", kind: "gpu", nodes: [] }] });
  const c = fleet.cluster("gpu");
  kube = new HttpKube(kubeConfigFrom(c.kubeconfig));
  await installBedStorage(c, { storageClass: CLASS }); // no capacity objects: the driver publishes none
  stats = await startKubeletStats(c, {
    node: "storage-0",
    claims: [
      { claim: CLAIM, namespace: NS, capacityBytes: 2000 * GiB, availableBytes: 1500.5 * GiB, usedBytes: 3 * GiB },
    ],
  });
  const must = async (method: string, path: string, body: unknown) => {
    const r = await kube.request(method, path, { body });
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  };
  await must("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  await must("POST", `/api/v1/namespaces/${NS}/persistentvolumeclaims`, {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: CLAIM, namespace: NS },
    spec: { storageClassName: CLASS, accessModes: ["ReadWriteMany"], resources: { requests: { storage: "10Gi" } } },
  });
  // A session's pod on the storage node, mounting the claim (placed by name: no scheduler needed).
  await must("POST", `/api/v1/namespaces/${NS}/pods`, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "session-a", namespace: NS, labels: { [LABELS.sessionId]: "ses_a" } },
    spec: {
      nodeName: "storage-0",
      containers: [{ name: "main", image: "jupyter", volumeMounts: [{ name: "data", mountPath: "/data" }] }],
      volumes: [{ name: "data", persistentVolumeClaim: { claimName: CLAIM } }],
    },
  });
  reporter = new StorageReporter({
    kube,
    clusterId: "clu_gpu",
    intervalMs: 1_000,
    send: async (r) => {
      sent.push(r);
    },
    log: pino({ level: "silent" }),
    // The stand-in kubelet directly: the apiserver refuses to proxy to the bed's loopback node addresses.
    statsSummary: async (node) => (node === stats?.node ? stats.summary() : { status: 404 }),
  });
}, 180_000);

afterAll(async () => {
  await stats?.stop();
  kube?.close();
  await fleet?.stop();
});

const classOf = (r: StorageReport | undefined) => r?.classes.find((c) => c.storage_class === CLASS);

describe("the driver's volume stats where it publishes no capacity objects", () => {
  it("reads the class from a mounted claim's volume stats, finding the claim's class in the apiserver", async () => {
    await reporter.tick();
    const r = sent.at(-1);
    expect(classOf(r)).toEqual({ storage_class: CLASS, available_gb: 1500, total_gb: 2000, via: "volume_stats" });
    expect(r?.volumes).toEqual([{ claim_name: CLAIM, used_gb: 3, node: "storage-0" }]);
    expect(stats?.requests).toBeGreaterThan(0);
  });

  it("yields to the driver's capacity objects once it publishes them, and comes back when they go", async () => {
    const path = `/apis/storage.k8s.io/v1/namespaces/kube-system/csistoragecapacities`;
    const created = await kube.request("POST", path, {
      body: {
        apiVersion: "storage.k8s.io/v1",
        kind: "CSIStorageCapacity",
        metadata: { name: "nfs-pool", namespace: "kube-system" },
        storageClassName: CLASS,
        capacity: "1200Gi",
      },
    });
    expect(created.status).toBe(201);
    await reporter.tick();
    expect(classOf(sent.at(-1))).toEqual({ storage_class: CLASS, available_gb: 1200, via: "csi_capacity" });
    expect((await kube.request("DELETE", `${path}/nfs-pool`)).status).toBe(200);
    await reporter.tick();
    expect(classOf(sent.at(-1))).toMatchObject({ via: "volume_stats", available_gb: 1500 });
  });

  it("keeps the last figure after the session's pod goes, saying when it was measured", async () => {
    const before = sent.at(-1)?.observed_at as string;
    expect((await kube.request("DELETE", `/api/v1/namespaces/${NS}/pods/session-a?gracePeriodSeconds=0`)).status).toBe(
      200,
    );
    for (let i = 0; i < 50; i++) {
      const r = await kube.request("GET", `/api/v1/namespaces/${NS}/pods/session-a`);
      if (r.status === 404) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    stats?.set([]);
    await new Promise((res) => setTimeout(res, 20));
    await reporter.tick();
    const r = sent.at(-1);
    expect(r?.volumes).toBeUndefined();
    expect(classOf(r)).toEqual({
      storage_class: CLASS,
      available_gb: 1500,
      total_gb: 2000,
      via: "volume_stats",
      measured_at: before,
    });
  });
});
