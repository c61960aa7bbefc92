// biome-ignore-all lint/suspicious/noExplicitAny: journeys read the API's JSON as it comes
// A user's volume follows the session to the cluster it lands on: the operator there makes the claim on
// the pool's storage class (named and pointed at the data from the volume id alone), it binds through
// kube-controller-manager's binder (the bed's provisioner makes the PersistentVolume), the pod mounts it,
// and from then on the volume's sessions stay on that cluster (a pin elsewhere: 409). A claim that cannot
// bind shows in the session's condition instead of a silent wait.

import type { BodyOf, ResponseOf } from "@berth/console/client";
import { PoolKind, resourcePath } from "@berth/crds";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi, outcomeOf, refusalOf } from "../api-client.ts";
import {
  adminKube,
  gpuCluster,
  H100,
  MANAGEMENT,
  SESSIONS_NS,
  type SessionsBed,
  startSessionsBed,
} from "../sessions/harness.ts";
import { type BedProvisioner, installBedStorage, startProvisioner } from "./bed-storage.ts";

vi.setConfig({ testTimeout: 180_000 });

const CLASS = "berth-shared";
const UNBACKED = "berth-unbacked";
let bed: SessionsBed;
const provisioners: BedProvisioner[] = [];

beforeAll(async () => {
  bed = await startSessionsBed({
    // Claims idle for 3 s are released (production: 15 minutes).
    worker: { claimIdleMs: 3_000 },
    operatorStorageIntervalMs: 300,
    fleet: {
      clusters: [
        MANAGEMENT,
        gpuCluster("gpu-a", [{ name: "gpu-a-1", gpuModel: H100, gpuCount: 4 }]),
        gpuCluster("gpu-b", [{ name: "gpu-b-1", gpuModel: H100, gpuCount: 4 }]),
      ],
    },
  });
  for (const name of ["gpu-a", "gpu-b"]) {
    const c = bed.fleet.cluster(name);
    await installBedStorage(c, { storageClass: CLASS, capacityGb: 1000 });
    await installBedStorage(c, { storageClass: UNBACKED });
    provisioners.push(startProvisioner(c, { storageClass: CLASS }));
  }
}, 300_000);

afterAll(async () => {
  for (const p of provisioners) await p.stop();
  await bed?.stop();
});

const session = (over: Partial<BodyOf<"createSession">>): BodyOf<"createSession"> => ({
  offering: "h100",
  preset: "gpu-small",
  image: "jupyterlab",
  ...over,
});

async function eventually<T>(f: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("a volume where the session lands", () => {
  let volume: ResponseOf<"createVolume">;
  let first: any;

  // Creates through the typed client: a refusal throws with the envelope's message.
  it("creates the pool and the volume through the API", async () => {
    await bedApi(bed, bed.superAdmin).call("createStoragePool", {
      body: { name: "shared", cluster: bed.gpu["gpu-a"]?.id as string, storage_class: CLASS, manual_capacity_gb: 900 },
    });
    await bedApi(bed, bed.superAdmin).call("createStoragePool", {
      body: { name: "unbacked", cluster: bed.gpu["gpu-a"]?.id as string, storage_class: UNBACKED, default: false },
    });
    volume = await bedApi(bed, bed.alice).call("createVolume", { body: { name: "home", size_gb: 10 } });
    expect(volume).toMatchObject({ pool: "shared", bound_cluster: null });
  });

  it("reads the pool's capacity from the driver's report (csi), falls back to the stated one (manual), and records each change", async () => {
    const pool = (pred: (p: ResponseOf<"getStoragePool">) => boolean, what: string) =>
      eventually(async () => {
        const p = await bedApi(bed, bed.superAdmin).call("getStoragePool", { params: { pool: "shared" } });
        return pred(p) ? p : undefined;
      }, what);
    expect((await pool((p) => p.capacity?.source === "csi", "a csi reading")).capacity).toMatchObject({
      source: "csi",
      total_gb: 1000,
      available_gb: 1000,
    });
    const a = bed.fleet.cluster("gpu-a");
    const k = adminKube(a);
    try {
      await k.json("DELETE", `/apis/storage.k8s.io/v1/namespaces/kube-system/csistoragecapacities/${CLASS}-pool`);
      expect((await pool((p) => p.capacity?.source === "manual", "the manual fallback")).capacity).toMatchObject({
        source: "manual",
        total_gb: 900,
      });
    } finally {
      k.close();
    }
    await installBedStorage(a, { storageClass: CLASS, capacityGb: 1000 });
    await pool((p) => p.capacity?.source === "csi", "the csi reading back");
    const mk = adminKube(bed.fleet.cluster("mgmt"));
    try {
      const cr = await mk.json<any>("GET", resourcePath(PoolKind, { name: "shared" }));
      expect(cr.status.sourceChanges.map((c: any) => `${c.from ?? "-"}>${c.to ?? "-"}`).slice(-3)).toEqual([
        "->csi",
        "csi>manual",
        "manual>csi",
      ]);
    } finally {
      mk.close();
    }
  });

  it("makes the claim on the landing cluster, binds it to the volume's data path, and mounts it", async () => {
    const created = await bedApi(bed, bed.alice).call("createSession", {
      body: session({ volumes: [{ volume: volume.id }] }),
    });
    first = await bed.waitFor(bed.alice, created.id, (s) => s.phase === "Running", "Running", 90_000);
    const landed = Object.values(bed.gpu).find((g) => g.id === first.cluster_id);
    expect(landed).toBeDefined();
    const claimName = `berth-${volume.id.replace("_", "-")}`;
    const dataPath = `berth/volumes/${volume.id.replace("_", "-")}`;

    const k = adminKube(bed.fleet.cluster(landed?.name as string));
    try {
      const pvc = await k.json<any>("GET", `/api/v1/namespaces/${SESSIONS_NS}/persistentvolumeclaims/${claimName}`);
      expect(pvc.status.phase).toBe("Bound");
      expect(pvc.spec.storageClassName).toBe(CLASS);
      expect(pvc.spec.resources.requests.storage).toBe("10Gi");
      const pv = await k.json<any>("GET", `/api/v1/persistentvolumes/${pvc.spec.volumeName}`);
      expect(pv.spec.csi.volumeHandle).toBe(dataPath);
      expect(pv.spec.claimRef.name).toBe(claimName);
      const pods = await k.json<any>("GET", `/api/v1/namespaces/${SESSIONS_NS}/pods`);
      const pod = pods.items.find((p: any) => p.metadata.name === created.id.replace("_", "-"));
      expect(pod.spec.volumes.find((x: any) => x.name === "vol-0")?.persistentVolumeClaim?.claimName).toBe(claimName);
      expect(pod.spec.containers[0].volumeMounts).toContainEqual(
        expect.objectContaining({ name: "vol-0", mountPath: "/home/jovyan/work" }),
      );
    } finally {
      k.close();
    }
    // The other cluster has no claim for it.
    const other = Object.values(bed.gpu).find((g) => g.id !== first.cluster_id);
    const ko = adminKube(bed.fleet.cluster(other?.name as string));
    try {
      const none = await ko.raw("GET", `/api/v1/namespaces/${SESSIONS_NS}/persistentvolumeclaims/${claimName}`);
      expect(none.status).toBe(404);
    } finally {
      ko.close();
    }

    const detail = await bedApi(bed, bed.alice).call("getVolume", { params: { volumeId: volume.id } });
    expect(detail).toMatchObject({ bound_cluster: first.cluster_id, claim_name: claimName });
    expect(detail.mounts).toEqual([{ session_id: first.id, read_only: false, mount_path: null }]);
  });

  it("keeps the volume's next session on that cluster, and refuses a pin elsewhere with 409", async () => {
    const other = Object.values(bed.gpu).find((g) => g.id !== first.cluster_id)?.id;
    // The API reads volumes through a cache of a few seconds.
    const refused = await eventually(async () => {
      const r = await outcomeOf(
        bedApi(bed, bed.alice).call("createSession", {
          body: session({ cluster_id: other, volumes: [{ volume: volume.id }] }),
        }),
      );
      if (r.ok) throw new Error("a session pinned away from its volume's claim was accepted");
      return r.refusal.status === 409 ? r.refusal : undefined;
    }, "409");
    expect(refused).toMatchObject({
      code: "volume_on_another_cluster",
      details: { bound_cluster: first.cluster_id, requested_cluster: other },
    });
    const second = await bedApi(bed, bed.alice).call("createSession", {
      body: session({ volumes: [{ volume: volume.id, read_only: true, mount_path: "/data" }] }),
    });
    const running = await bed.waitFor(bed.alice, second.id, (s) => s.phase === "Running", "Running", 90_000);
    expect(running.cluster_id).toBe(first.cluster_id);
    expect(running.conditions.find((c: any) => c.type === "Scheduled")?.reason).toBe("VolumeLocality");
    // Mounted: the volume is not deleted.
    const del = await refusalOf(bedApi(bed, bed.alice).call("deleteVolume", { params: { volumeId: volume.id } }));
    expect(del.status).toBe(409);
    expect(del.code).toBe("volume_in_use");
    second_ = running;
  });

  let second_: any;
  it("releases the claim once no session uses it (the data stays); the next session lands elsewhere and reaches the same data", async () => {
    for (const s of [first, second_])
      await bedApi(bed, bed.alice).call("terminateSession", { params: { sessionId: s.id } });
    const claimName = `berth-${volume.id.replace("_", "-")}`;
    const dataPath = `berth/volumes/${volume.id.replace("_", "-")}`;
    await eventually(
      async () => {
        const d = await bedApi(bed, bed.alice).call("getVolume", { params: { volumeId: volume.id } });
        return d.bound_cluster === null ? d : undefined;
      },
      "the claim's release",
      60_000,
    );
    const was = Object.values(bed.gpu).find((g) => g.id === first.cluster_id);
    const k = adminKube(bed.fleet.cluster(was?.name as string));
    try {
      await eventually(async () => {
        const r = await k.raw("GET", `/api/v1/namespaces/${SESSIONS_NS}/persistentvolumeclaims/${claimName}`);
        return r.status === 404 ? true : undefined;
      }, "the claim to go");
      const pvs = await k.json<any>("GET", "/api/v1/persistentvolumes");
      expect(pvs.items.find((pv: any) => pv.spec.csi?.volumeHandle === dataPath)).toBeDefined();
    } finally {
      k.close();
    }

    const other = Object.values(bed.gpu).find((g) => g.id !== first.cluster_id);
    const created = await eventually(async () => {
      const r = await outcomeOf(
        bedApi(bed, bed.alice).call("createSession", {
          body: session({ cluster_id: other?.id, volumes: [{ volume: volume.id }] }),
        }),
      );
      return r.ok ? r.body : undefined;
    }, "a session pinned to the other cluster");
    const running = await bed.waitFor(bed.alice, created.id, (s) => s.phase === "Running", "Running", 90_000);
    expect(running.cluster_id).toBe(other?.id);
    const ko = adminKube(bed.fleet.cluster(other?.name as string));
    try {
      const pvc = await ko.json<any>("GET", `/api/v1/namespaces/${SESSIONS_NS}/persistentvolumeclaims/${claimName}`);
      expect(pvc.status.phase).toBe("Bound");
      const pv = await ko.json<any>("GET", `/api/v1/persistentvolumes/${pvc.spec.volumeName}`);
      expect(pv.spec.csi.volumeHandle).toBe(dataPath);
    } finally {
      ko.close();
    }
    const detail = await bedApi(bed, bed.alice).call("getVolume", { params: { volumeId: volume.id } });
    expect(detail).toMatchObject({ bound_cluster: other?.id, claim_name: claimName });
  });

  it("keeps the sessions of a volume on a `selected` pool on that pool's clusters, and refuses a pin outside", async () => {
    const b = bed.gpu["gpu-b"]?.id as string;
    const a = bed.gpu["gpu-a"]?.id as string;
    await bedApi(bed, bed.superAdmin).call("createStoragePool", {
      body: { name: "only-b", cluster: b, storage_class: CLASS, sharing: "selected", clusters: [b], default: false },
    });
    const v = await bedApi(bed, bed.bob).call("createVolume", { body: { name: "b-only", size_gb: 1, pool: "only-b" } });
    const pinned = await refusalOf(
      bedApi(bed, bed.bob).call("createSession", { body: session({ cluster_id: a, volumes: [{ volume: v.id }] }) }),
    );
    expect(pinned.status).toBe(409);
    expect(pinned).toMatchObject({
      code: "volume_pool_not_shared",
      details: { pool: "only-b", clusters: [b], requested_cluster: a },
    });
    const created = await bedApi(bed, bed.bob).call("createSession", {
      body: session({ volumes: [{ volume: v.id }] }),
    });
    const running = await bed.waitFor(bed.bob, created.id, (s) => s.phase === "Running", "Running", 90_000);
    expect(running.cluster_id).toBe(b);
    expect(running.conditions.find((c: any) => c.type === "Scheduled")?.reason).toBe("VolumeLocality");
  });

  it("deletes a volume: its claim goes at once, an undo brings it back, and after the grace period its data goes", async () => {
    const bob = bedApi(bed, bed.bob);
    const v = await bob.call("createVolume", { body: { name: "scratch", size_gb: 2 } });
    const created = await bob.call("createSession", { body: session({ volumes: [{ volume: v.id }] }) });
    const running = await bed.waitFor(bed.bob, created.id, (s) => s.phase === "Running", "Running", 90_000);
    const where = Object.values(bed.gpu).find((g) => g.id === running.cluster_id);
    const claimName = `berth-${v.id.replace("_", "-")}`;
    const dataPath = `berth/volumes/${v.id.replace("_", "-")}`;
    const refused = await refusalOf(bob.call("deleteVolume", { params: { volumeId: v.id } }));
    expect(refused).toMatchObject({ code: "volume_in_use", details: { sessions: [created.id] } });
    await bob.call("terminateSession", { params: { sessionId: created.id } });
    const del = await eventually(async () => {
      const r = await outcomeOf(bob.call("deleteVolume", { params: { volumeId: v.id } }));
      return r.ok ? r.body : undefined;
    }, "the delete once the session is terminated");
    expect(del.purge_after).not.toBeNull();
    const k = adminKube(bed.fleet.cluster(where?.name as string));
    try {
      await eventually(async () => {
        const r = await k.raw("GET", `/api/v1/namespaces/${SESSIONS_NS}/persistentvolumeclaims/${claimName}`);
        return r.status === 404 ? true : undefined;
      }, "the deleted volume's claim to go");
      // The volume forgets the cluster once its claim is gone (not before: docs/dev/storage.md, the release race).
      await eventually(async () => {
        const r = await bob.call("listVolumes", { query: { deleted: "true" } });
        return r.data.some((x) => x.id === v.id && x.bound_cluster === null) ? true : undefined;
      }, "the deleted volume's record to forget the cluster");
      // Undo within the grace period: back, unbound, its data untouched.
      const back = await bob.call("restoreVolume", { params: { volumeId: v.id } });
      expect(back).toMatchObject({ bound_cluster: null, deleted_at: null });
      const pvs = await k.json<any>("GET", "/api/v1/persistentvolumes");
      expect(pvs.items.some((pv: any) => pv.spec.csi?.volumeHandle === dataPath)).toBe(true);

      // With no grace period the data goes: its PVs are handed back to the driver, which removes them.
      await bedApi(bed, bed.superAdmin).call("updateStorageSettings", { body: { delete_grace_hours: 0 } });
      await bob.call("deleteVolume", { params: { volumeId: v.id } });
      await eventually(
        async () => (provisioners.some((p) => p.removed.has(dataPath)) ? true : undefined),
        "the driver to remove the data",
        60_000,
      );
      await eventually(async () => {
        const r = await k.json<any>("GET", "/api/v1/persistentvolumes");
        return r.items.some((pv: any) => pv.spec.csi?.volumeHandle === dataPath) ? undefined : true;
      }, "the PV to go");
      const late = await refusalOf(bob.call("restoreVolume", { params: { volumeId: v.id } }));
      expect(late.code).toBe("volume_purged");
    } finally {
      k.close();
      await bedApi(bed, bed.superAdmin).call("updateStorageSettings", { body: { delete_grace_hours: 24 } });
    }
  });

  it("says so in the session's condition while a claim waits to bind", async () => {
    const v = await bedApi(bed, bed.bob).call("createVolume", {
      body: { name: "stuck", size_gb: 1, pool: "unbacked" },
    });
    const created = await bedApi(bed, bed.bob).call("createSession", {
      body: session({ volumes: [{ volume: v.id }] }),
    });
    const waiting = await bed.waitFor(
      bed.bob,
      created.id,
      (s) => s.conditions?.some((c: any) => c.type === "Ready" && c.reason === "WaitingForClaim"),
      "WaitingForClaim",
      60_000,
    );
    expect(waiting.phase).toBe("Starting");
    expect(waiting.conditions.find((c: any) => c.type === "Ready").message).toContain(
      `berth-${v.id.replace("_", "-")}`,
    );
  });
});
