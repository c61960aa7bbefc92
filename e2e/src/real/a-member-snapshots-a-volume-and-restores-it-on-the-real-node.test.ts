// biome-ignore-all lint/suspicious/noExplicitAny: journeys read the API's JSON as it comes
// A member snapshots a volume and restores it, for real: a JupyterLab session on the bed's real node writes
// 1 GiB into its volume (the hostpath CSI driver's folder on this host); while it runs the snapshot is
// refused (volume_mounted); paused, the member snapshots it through the API, the worker's SnapshotLoop
// makes the VolumeSnapshot on gpu-b, the upstream snapshot controller and csi-snapshotter have the plugin
// copy the folder, and the loop reads readyToUse from them; the restore makes a new volume whose claim
// the external-provisioner fills from the copy; a second session mounting it reads back the same bytes
// (SHA-256); deleting the snapshot removes the copy from the host. One fleet for the file.
//
// Needs root and containerd (e2e/src/testbed/real-node/can-run.ts); skipped with its reason elsewhere.
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import { KubeHttp } from "../testbed/kube.ts";
import { canRunRealNode } from "../testbed/real-node/index.ts";
import { until } from "../until.ts";
import { openLab, podOf, REAL_PRESET, type RealFleet, runCell, startRealFleet } from "./real-fleet.ts";

vi.setConfig({ testTimeout: 300_000, hookTimeout: 900_000 });

const can = canRunRealNode();
const NODE = "gpu-b-real-snapshots";
const NS = "berth-sessions";
const GIB = 1024 ** 3;
let f: RealFleet;
let gpuB: KubeHttp;

beforeAll(async () => {
  if (!can.ok) return;
  f = await startRealFleet(["jupyterlab"], { nodeName: NODE });
  const c = f.bed.fleet.cluster("gpu-b");
  gpuB = new KubeHttp({ server: c.server, caPem: c.caPem, token: c.adminToken });
});

afterAll(async () => {
  gpuB?.close();
  await f?.stop();
});

// Written in 64 MiB pieces of random bytes, hashed as written; fsync'd so the bytes are on the folder.
const WRITE_1GIB = [
  "import hashlib, os",
  "h = hashlib.sha256()",
  "with open('/home/jovyan/work/blob.bin', 'wb') as out:",
  "    for _ in range(16):",
  "        b = os.urandom(64 * 1024 * 1024); h.update(b); out.write(b)",
  "    out.flush(); os.fsync(out.fileno())",
  "h.hexdigest()",
].join("\n");
const READ_BACK = [
  "import hashlib",
  "h = hashlib.sha256()",
  "with open('/home/jovyan/work/blob.bin', 'rb') as f:",
  "    for b in iter(lambda: f.read(64 * 1024 * 1024), b''): h.update(b)",
  "h.hexdigest()",
].join("\n");

describe.skipIf(!can.ok)(
  `a member snapshots a volume and restores it on the real node${can.ok ? "" : ` (skipped: ${can.reason})`}`,
  () => {
    let volumeId = "";
    let sessionId = "";
    let snapshotId = "";
    let copyId = "";
    let digest = "";
    let handle = "";

    it("writes 1 GiB into a volume from a session on the real node", async () => {
      const alice = bedApi(f.bed, f.bed.alice);
      const vol = await alice.call("createVolume", { body: { name: "data", size_gb: 1, pool: "real" } as any });
      volumeId = vol.id;
      const s = await alice.call("createSession", {
        body: {
          offering: "l4",
          preset: REAL_PRESET,
          image: f.images.jupyterlab?.name as string,
          volumes: [{ volume: volumeId }],
        },
      });
      sessionId = s.id;
      const running = await f.bed.waitFor(f.bed.alice, s.id, (x) => x.phase === "Running", "Running", 180_000);
      expect((await podOf(f, running.resource_name)).spec.nodeName).toBe(NODE);
      const lab = await openLab(f, f.bed.alice, s.id, running.resource_name);
      digest = JSON.parse((await runCell(f, running.resource_name, lab, WRITE_1GIB, 240_000)).replaceAll("'", '"'));
      expect(digest).toMatch(/^[0-9a-f]{64}$/);
      // The bytes are in the driver's folder for the volume's claim, on this host.
      const claim = `berth-${volumeId.replace("_", "-")}`;
      expect(statSync(join(f.csi.volumePath(`${NS}/${claim}`), "blob.bin")).size).toBe(GIB);
    });

    it("is refused while the session mounts it read-write, naming the session", async () => {
      const r = await fetch(`${f.bed.t.api.url}/api/v1/storage/volumes/${volumeId}/snapshots`, {
        method: "POST",
        headers: { authorization: `Bearer ${f.bed.alice.token}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "too-soon" }),
      });
      const body: any = await r.json();
      expect(r.status).toBe(409);
      expect(body.error.code).toBe("volume_mounted");
      expect(JSON.stringify(body.error.details)).toContain(sessionId);
    });

    it("paused, it is snapshotted: the real snapshot controller and csi-snapshotter cut a copy, and the worker reads readyToUse", async () => {
      const alice = bedApi(f.bed, f.bed.alice);
      await alice.call("pauseSession", { params: { sessionId } });
      await f.bed.waitFor(f.bed.alice, sessionId, (s) => s.phase === "Paused", "Paused", 120_000);
      const snap = await alice.call("createVolumeSnapshot", {
        params: { volumeId },
        body: { name: "before-the-experiment" },
      });
      snapshotId = snap.id;
      const ready = await until(
        "the snapshot ready",
        async () => {
          const s = await alice.call("getVolumeSnapshot", { params: { volumeId, snapshotId } });
          if (s.state === "failed") throw new Error(`the snapshot failed: ${s.failure}`);
          return s.state === "ready" ? s : undefined;
        },
        300_000,
      );
      expect(ready).toMatchObject({ cluster: f.bed.gpu["gpu-b"]?.id, restore_size_bytes: String(GIB), size_gb: 1 });
      // On gpu-b: the controller's VolumeSnapshotContent, and the plugin's copy of the folder on this host.
      const vs = await gpuB.json<any>(
        "GET",
        `/apis/snapshot.storage.k8s.io/v1/namespaces/${NS}/volumesnapshots/berth-${snapshotId.replace("_", "-")}`,
      );
      expect(vs.status).toMatchObject({ readyToUse: true, restoreSize: "1Gi" });
      const content = await gpuB.json<any>(
        "GET",
        `/apis/snapshot.storage.k8s.io/v1/volumesnapshotcontents/${vs.status.boundVolumeSnapshotContentName}`,
      );
      handle = content.status.snapshotHandle;
      expect(statSync(join(f.csi.snapshotPath(handle), "blob.bin")).size).toBe(GIB);
    });

    it("restores it into a new volume; a session mounting that reads back the same bytes", async () => {
      const alice = bedApi(f.bed, f.bed.alice);
      const copy = await alice.call("restoreVolumeSnapshot", {
        params: { volumeId, snapshotId },
        body: { name: "data-restored" },
      });
      copyId = copy.id;
      await until(
        "the volume restored",
        async () => {
          const v: any = await alice.call("getVolume", { params: { volumeId: copyId } });
          return v.restoring === false ? v : undefined;
        },
        300_000,
      );
      const s = await alice.call("createSession", {
        body: {
          offering: "l4",
          preset: REAL_PRESET,
          image: f.images.jupyterlab?.name as string,
          volumes: [{ volume: copyId }],
        },
      });
      const running = await f.bed.waitFor(f.bed.alice, s.id, (x) => x.phase === "Running", "Running", 180_000);
      expect((await podOf(f, running.resource_name)).spec.nodeName).toBe(NODE);
      const lab = await openLab(f, f.bed.alice, s.id, running.resource_name);
      const read = JSON.parse((await runCell(f, running.resource_name, lab, READ_BACK, 240_000)).replaceAll("'", '"'));
      expect(read).toBe(digest);
    });

    it("deleting the snapshot removes the copy from the host", async () => {
      const alice = bedApi(f.bed, f.bed.alice);
      await alice.call("deleteVolumeSnapshot", { params: { volumeId, snapshotId } });
      await until(
        "the snapshot gone",
        async () => {
          const r = await fetch(`${f.bed.t.api.url}/api/v1/storage/volumes/${volumeId}/snapshots/${snapshotId}`, {
            headers: { authorization: `Bearer ${f.bed.alice.token}` },
          });
          return r.status === 404 ? true : undefined;
        },
        120_000,
      );
      expect(existsSync(f.csi.snapshotPath(handle))).toBe(false);
    });
  },
);
