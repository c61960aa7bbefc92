// The pool's capacity from the driver itself: the bed's hostpath CSI driver (e2e/src/testbed/csi-hostpath.ts)
// publishes CSIStorageCapacity through the upstream external-provisioner, and the volume-sync tick reports
// that figure for the class (`via: csi_capacity`), less what a provisioned claim took. No kubelet here:
// the node's CSINode and topology label are written as the kubelet writes them once the plugin registers
// (e2e/src/testbed/csi-hostpath.real-node.test.ts has the real kubelet do it).
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HttpKube } from "@berth/controllers/kube";
import type { StorageReport } from "@berth/crds/internal-plane";
import {
  type Fleet,
  HOSTPATH_DRIVER,
  kubeConfigFrom,
  type RunningCsiHostpath,
  startCsiHostpath,
  startFleet,
} from "@berth/e2e";
import { eventually } from "@berth/e2e/testing";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StorageReporter } from "./reporter.ts";

const CLASS = "berth-hostpath";
const NODE = "gpu-real-1";
const NS = "berth-sessions";
const TOPOLOGY = `topology.${HOSTPATH_DRIVER}/node`;

let fleet: Fleet;
let kube: HttpKube;
let csi: RunningCsiHostpath | undefined;
const sent: StorageReport[] = [];
let reporter: StorageReporter;

const must = async (method: string, path: string, body: unknown) => {
  const r = await kube.request(method, path, { body });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { metadata: { uid: string } };
};

beforeAll(async () => {
  fleet = await startFleet({ clusters: [{ name: "gpu", kind: "gpu", nodes: [] }] });
  const c = fleet.cluster("gpu");
  kube = new HttpKube(kubeConfigFrom(c.kubeconfig));
  const node = await must("POST", "/api/v1/nodes", {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: NODE, labels: { [TOPOLOGY]: NODE } },
  });
  await must("POST", "/apis/storage.k8s.io/v1/csinodes", {
    apiVersion: "storage.k8s.io/v1",
    kind: "CSINode",
    metadata: { name: NODE, ownerReferences: [{ apiVersion: "v1", kind: "Node", name: NODE, uid: node.metadata.uid }] },
    spec: { drivers: [{ name: HOSTPATH_DRIVER, nodeID: NODE, topologyKeys: [TOPOLOGY] }] },
  });
  await must("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  csi = await startCsiHostpath({
    cluster: c,
    nodeName: NODE,
    dir: join(tmpdir(), `berth-reporter-csi-${process.pid}`),
    capacityGib: 500,
    capacityPollSeconds: 1,
  });
  reporter = new StorageReporter({
    kube,
    clusterId: "clu_gpu",
    intervalMs: 1_000,
    send: async (r) => {
      sent.push(r);
    },
    log: pino({ level: "silent" }),
  });
}, 600_000);

afterAll(async () => {
  await csi?.stop();
  kube?.close();
  await fleet?.stop();
});

/** Ticks until the class is reported with `gb` available. */
const reported = (gb: number) =>
  eventually(
    async () => {
      await reporter.tick();
      const cls = sent.at(-1)?.classes.find((x) => x.storage_class === CLASS);
      return cls?.available_gb === gb ? cls : undefined;
    },
    { what: `the class reported with ${gb} GB`, timeoutMs: 60_000, intervalMs: 500 },
  );

describe("the pool's capacity from the hostpath driver's CSIStorageCapacity", () => {
  it("reports the driver's figure for the class", async () => {
    expect(await reported(500)).toEqual({ storage_class: CLASS, available_gb: 500, via: "csi_capacity" });
  });

  it("reports less once a claim of the class is provisioned", async () => {
    await must("POST", `/api/v1/namespaces/${NS}/persistentvolumeclaims`, {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "berth-vol-cccccccccccccccccccc", namespace: NS },
      spec: { storageClassName: CLASS, accessModes: ["ReadWriteMany"], resources: { requests: { storage: "20Gi" } } },
    });
    expect(await reported(480)).toEqual({ storage_class: CLASS, available_gb: 480, via: "csi_capacity" });
  });
});
