// What a real install has on each GPU cluster for a shared pool, made on the bed where no storage driver
// runs: the driver's registration (CSIDriver, with storageCapacity: true), the pool's StorageClass and
// the driver's capacity reports (CSIStorageCapacity; the apiserver needs no driver for any of these).
// `startProvisioner` stands in for the driver's external provisioner: it binds each pending claim of the
// class to a PersistentVolume whose volume handle is the claim's data path, and kube-controller-manager's
// binder does the rest for real. Two clusters' claims for one volume thus name the same data. A released
// PV handed back with reclaim policy Delete (a purged volume) is removed, as the driver would its data.
import { KubeHttp } from "../testbed/kube.ts";
import type { Cluster } from "../testbed/types.ts";

export const BED_DRIVER = "nfs.csi.bed.berth.dev";
const DATA_PATH_ANNOTATION = "berth.dev/data-path";

const adminOf = (c: Cluster) => new KubeHttp({ server: c.server, caPem: c.caPem, token: c.adminToken });

export async function installBedStorage(
  c: Cluster,
  o: { storageClass: string; capacityGb?: number; namespace?: string },
): Promise<void> {
  const k = adminOf(c);
  try {
    await k.ensure("/apis/storage.k8s.io/v1/csidrivers", {
      apiVersion: "storage.k8s.io/v1",
      kind: "CSIDriver",
      metadata: { name: BED_DRIVER },
      spec: {
        attachRequired: false,
        podInfoOnMount: false,
        storageCapacity: true,
        volumeLifecycleModes: ["Persistent"],
      },
    });
    await k.ensure("/apis/storage.k8s.io/v1/storageclasses", {
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: { name: o.storageClass },
      provisioner: BED_DRIVER,
      reclaimPolicy: "Retain",
      volumeBindingMode: "Immediate",
    });
    if (o.capacityGb !== undefined) {
      const ns = o.namespace ?? "kube-system";
      await k.ensure(`/apis/storage.k8s.io/v1/namespaces/${ns}/csistoragecapacities`, {
        apiVersion: "storage.k8s.io/v1",
        kind: "CSIStorageCapacity",
        metadata: { name: `${o.storageClass}-pool`, namespace: ns },
        storageClassName: o.storageClass,
        capacity: `${o.capacityGb}Gi`,
      });
    }
  } finally {
    k.close();
  }
}

interface ClaimItem {
  metadata: { name: string; namespace: string; uid: string; annotations?: Record<string, string> };
  spec: {
    storageClassName?: string;
    volumeName?: string;
    accessModes?: string[];
    resources?: { requests?: { storage?: string } };
  };
  status?: { phase?: string };
}

export interface BedProvisioner {
  /** PersistentVolumes it made, by claim (namespace/name) → volume handle (data path). */
  handles: Map<string, string>;
  /** Data paths it removed (a released PV handed back with reclaim policy Delete), as a driver does. */
  removed: Set<string>;
  stop(): Promise<void>;
}

/** Every `intervalMs`: a PV for each pending claim of `storageClass` that has none. */
export function startProvisioner(c: Cluster, o: { storageClass: string; intervalMs?: number }): BedProvisioner {
  const k = adminOf(c);
  const handles = new Map<string, string>();
  const removed = new Set<string>();
  let stopped = false;
  const tick = async () => {
    // What the driver's provisioner does with a released volume whose policy is Delete: the data and the PV go.
    const pvs = await k.json<{
      items: {
        metadata: { name: string };
        spec: { storageClassName?: string; persistentVolumeReclaimPolicy?: string; csi?: { volumeHandle?: string } };
        status?: { phase?: string };
      }[];
    }>("GET", "/api/v1/persistentvolumes");
    for (const pv of pvs.items) {
      if (pv.spec.storageClassName !== o.storageClass || pv.spec.persistentVolumeReclaimPolicy !== "Delete") continue;
      if (pv.status?.phase !== "Released" && pv.status?.phase !== "Available") continue;
      const res = await k.raw("DELETE", `/api/v1/persistentvolumes/${pv.metadata.name}`);
      if ((res.status < 300 || res.status === 404) && pv.spec.csi?.volumeHandle) removed.add(pv.spec.csi.volumeHandle);
    }
    const list = await k.json<{ items: ClaimItem[] }>("GET", "/api/v1/persistentvolumeclaims");
    for (const pvc of list.items) {
      if (pvc.spec.storageClassName !== o.storageClass || pvc.spec.volumeName || pvc.status?.phase === "Bound")
        continue;
      const handle =
        pvc.metadata.annotations?.[DATA_PATH_ANNOTATION] ?? `${pvc.metadata.namespace}/${pvc.metadata.name}`;
      const res = await k.raw("POST", "/api/v1/persistentvolumes", {
        apiVersion: "v1",
        kind: "PersistentVolume",
        metadata: { name: `pv-${pvc.metadata.uid}`, annotations: { "pv.kubernetes.io/provisioned-by": BED_DRIVER } },
        spec: {
          capacity: { storage: pvc.spec.resources?.requests?.storage ?? "1Gi" },
          accessModes: pvc.spec.accessModes ?? ["ReadWriteMany"],
          persistentVolumeReclaimPolicy: "Retain",
          storageClassName: o.storageClass,
          csi: { driver: BED_DRIVER, volumeHandle: handle },
          claimRef: {
            apiVersion: "v1",
            kind: "PersistentVolumeClaim",
            namespace: pvc.metadata.namespace,
            name: pvc.metadata.name,
            uid: pvc.metadata.uid,
          },
        },
      });
      if (res.status === 201 || res.status === 409)
        handles.set(`${pvc.metadata.namespace}/${pvc.metadata.name}`, handle);
    }
  };
  const loop = (async () => {
    while (!stopped) {
      await tick().catch(() => {});
      await new Promise((r) => setTimeout(r, o.intervalMs ?? 200));
    }
  })();
  return {
    handles,
    removed,
    async stop() {
      stopped = true;
      await loop;
      k.close();
    },
  };
}
