import { HttpKube } from "@berth/controllers/kube";

// The snapshot loop against real kube-apiservers of the bed (a management cluster with Berth's CRDs, a GPU
// cluster with the CSI snapshot CRDs from the upstream module and the bed's stand-in provisioner) and real
// Postgres, driven through the public routes. This bed has no driver and runs no snapshot controller: where
// this test writes a VolumeSnapshot's status it plays that controller (the status a real one writes:
// readyToUse and restoreSize, or an error); everything Berth writes and reads goes through the apiservers.
// The real controller and driver: e2e/src/real/a-member-snapshots-a-volume-and-restores-it-on-the-real-node.test.ts.

import { loadCrds } from "@berth/crds/manifests";
import { type Fleet, kubeConfigFrom, startFleet } from "@berth/e2e";
import { type BedProvisioner, installBedStorage, startProvisioner } from "@berth/e2e/storage";
import { installSnapshotCrds } from "@berth/e2e/storage/snapshot-crds";
import { eventually } from "@berth/e2e/testing";
import { ApiextensionsV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installDefaultCatalog } from "../bootstrap/catalog.ts";
import { aGpuCluster } from "../db/operations/sessions/sessions.test-support.ts";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  startIdentityTestApi,
  type TestUser,
} from "../domain/identity/identity.test-support.ts";
import { SnapshotLoop } from "./snapshots.ts";

const CLASS = "berth-snap-class";
const NS = "berth-sessions";
const GROUP = { group: "berth.dev", version: "v1alpha1" };
const SNAP = "/apis/snapshot.storage.k8s.io/v1";

let fleet: Fleet;
let kc: KubeConfig;
let t: IdentityTestApi;
let w: IdentityWorld;
let gpu: HttpKube;
let bare: HttpKube;
let management: HttpKube;
let provisioner: BedProvisioner;
let loop: SnapshotLoop;

beforeAll(async () => {
  fleet = await startFleet({
    clusters: [
      { name: "mgmt", kind: "management" },
      { name: "gpu", kind: "gpu", nodes: [] },
      { name: "bare", kind: "gpu", nodes: [] },
    ],
  });
  kc = kubeConfigFrom(fleet.cluster("mgmt").kubeconfig);
  const ext = kc.makeApiClient(ApiextensionsV1Api);
  for (const crd of loadCrds()) await ext.createCustomResourceDefinition({ body: crd as never });
  management = new HttpKube(kc);
  await installDefaultCatalog(management);
  for (const plural of ["pools", "volumes", "sessions"]) {
    await eventually(
      async () => {
        await kc.makeApiClient(CustomObjectsApi).listClusterCustomObject({ ...GROUP, plural });
        return true;
      },
      { what: `${plural} served` },
    );
  }
  const c = fleet.cluster("gpu");
  await installBedStorage(c, { storageClass: CLASS });
  await installSnapshotCrds(c);
  provisioner = startProvisioner(c, { storageClass: CLASS, intervalMs: 100 });
  gpu = new HttpKube(kubeConfigFrom(c.kubeconfig));
  bare = new HttpKube(kubeConfigFrom(fleet.cluster("bare").kubeconfig));
  for (const k of [gpu, bare])
    await k.request("POST", "/api/v1/namespaces", {
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } },
    });
  t = await startIdentityTestApi({ kubeConfig: kc });
  w = await anIdentityWorld(t);
  await aGpuCluster(t.database.db, "clu_east", 8);
  await aGpuCluster(t.database.db, "clu_bare", 8);
  for (const [name, cluster] of [
    ["snappy", "clu_east"],
    ["nosnap", "clu_bare"],
  ] as const) {
    const r = await req(w.superAdmin, "POST", "/api/v1/storage/pools", {
      name,
      cluster,
      storage_class: CLASS,
      manual_capacity_gb: 1000,
      default: name === "snappy",
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
  // An endpoint of orgA subscribed to snapshot events: the outbox shows what the trigger wrote.
  await t.database.db("webhook_endpoints").insert({
    id: "whk_snapshotsaaaaaaaaaaa",
    organization_id: w.orgA.id,
    url: "https://hooks.example.test/berth",
    event_types: ["volume.snapshot.ready", "volume.snapshot.failed", "volume.snapshot.deleted"],
    secret: "whsec_dGVzdA==",
    created_by: w.adminA.id,
    created_at: new Date(),
    updated_at: new Date(),
  });
  loop = new SnapshotLoop({
    db: t.database.db,
    kube: management,
    log: pino({ level: "silent" }),
    namespace: NS,
    clusterClient: async (id) => {
      if (id === "clu_east") return gpu;
      if (id === "clu_bare") return bare;
      throw new Error(`no cluster ${id}`);
    },
  });
}, 180_000);

afterAll(async () => {
  await provisioner?.stop();
  gpu?.close();
  bare?.close();
  management?.close();
  await t?.stop();
  await fleet?.stop();
});

const req = (u: TestUser, method: string, path: string, json?: unknown) =>
  t.request(method, path, { token: u.token, ...(json !== undefined ? { json } : {}) });

async function snapshotOf(volumeId: string, id: string) {
  return (await req(w.memberA, "GET", `/api/v1/storage/volumes/${volumeId}/snapshots/${id}`)).body as {
    state: string;
    cluster: string | null;
    failure: string | null;
    restore_size_bytes: string | null;
  };
}

/** Passes of the loop until `probe` holds (each pass is one level-based look; no sleep stands in for it). */
const passUntil = <T>(probe: () => Promise<T | undefined | false>, what: string) =>
  eventually(
    async () => {
      await loop.pass();
      return probe();
    },
    { what, timeoutMs: 30_000, intervalMs: 100 },
  );

/** What a snapshot controller writes once the driver has cut the snapshot. */
async function controllerSays(name: string, status: Record<string, unknown>) {
  const r = await gpu.request("PATCH", `${SNAP}/namespaces/${NS}/volumesnapshots/${name}/status`, {
    body: { status },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

describe("snapshots on a GPU cluster's apiserver", () => {
  it("makes the VolumeSnapshot from the volume's claim, waits for the controller, restores into a new claim, deletes", async () => {
    const v = (await req(w.memberA, "POST", "/api/v1/storage/volumes", { name: "data", size_gb: 1 })).body as {
      id: string;
    };
    const s = (await req(w.memberA, "POST", `/api/v1/storage/volumes/${v.id}/snapshots`, { name: "first" })).body as {
      id: string;
    };
    const k8sName = `berth-${s.id.replace("_", "-")}`;
    // No claim anywhere: the worker makes it on the pool's cluster and records the binding on the Volume.
    const vs = await passUntil(async () => {
      const r = await gpu.request<{
        spec: { source: { persistentVolumeClaimName: string } };
        metadata: { labels: Record<string, string> };
      }>("GET", `${SNAP}/namespaces/${NS}/volumesnapshots/${k8sName}`);
      return r.status === 200 && r.body;
    }, "the VolumeSnapshot");
    const claim = `berth-${v.id.replace("_", "-")}`;
    expect(vs.spec.source).toEqual({ persistentVolumeClaimName: claim });
    expect(vs.metadata.labels).toMatchObject({ "berth.dev/snapshot-id": s.id, "berth.dev/volume-id": v.id });
    expect((await gpu.request("GET", `/api/v1/namespaces/${NS}/persistentvolumeclaims/${claim}`)).status).toBe(200);
    const vol = (await req(w.memberA, "GET", `/api/v1/storage/volumes/${v.id}`)).body;
    expect(vol).toMatchObject({ bound_cluster: "clu_east", claim_name: claim });
    // Not ready until the controller says so, however many passes.
    await loop.pass();
    expect(await snapshotOf(v.id, s.id)).toMatchObject({ state: "creating", cluster: "clu_east" });
    await controllerSays(k8sName, { readyToUse: true, restoreSize: "1Gi", creationTime: new Date().toISOString() });
    await passUntil(async () => (await snapshotOf(v.id, s.id)).state === "ready", "ready");
    expect((await snapshotOf(v.id, s.id)).restore_size_bytes).toBe(String(1024 ** 3));

    // Restore: the new volume's first claim comes from the snapshot, on the snapshot's cluster.
    const r = await req(w.memberA, "POST", `/api/v1/storage/volumes/${v.id}/snapshots/${s.id}/restore`, {
      name: "data-copy",
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const copyClaim = `berth-${(r.body.id as string).replace("_", "-")}`;
    const made = await passUntil(async () => {
      const c = await gpu.request<{ spec: { dataSource?: unknown } }>(
        "GET",
        `/api/v1/namespaces/${NS}/persistentvolumeclaims/${copyClaim}`,
      );
      return c.status === 200 && c.body;
    }, "the restored volume's claim");
    expect(made.spec.dataSource).toEqual({
      apiGroup: "snapshot.storage.k8s.io",
      kind: "VolumeSnapshot",
      name: k8sName,
    });
    // kube-controller-manager binds the claim to the provisioner's volume: restored.
    await passUntil(
      async () => (await req(w.memberA, "GET", `/api/v1/storage/volumes/${r.body.id}`)).body.restoring === false,
      "restored",
    );
    expect((await req(w.memberA, "GET", `/api/v1/storage/volumes/${r.body.id}`)).body).toMatchObject({
      restored_from: s.id,
      bound_cluster: "clu_east",
    });

    const del = await req(w.memberA, "DELETE", `/api/v1/storage/volumes/${v.id}/snapshots/${s.id}`);
    expect(del.status).toBe(202);
    await passUntil(
      async () => (await gpu.request("GET", `${SNAP}/namespaces/${NS}/volumesnapshots/${k8sName}`)).status === 404,
      "the VolumeSnapshot gone",
    );
    await passUntil(
      async () => (await req(w.memberA, "GET", `/api/v1/storage/volumes/${v.id}/snapshots/${s.id}`)).status === 404,
      "the snapshot gone",
    );
    const events = await t.database
      .db("webhook_events")
      .where({ ordering_key: `snapshot:${s.id}` })
      .orderBy("created_at")
      .select("type", "payload");
    expect(events.map((e: { type: string }) => e.type)).toEqual(["volume.snapshot.ready", "volume.snapshot.deleted"]);
    expect(events[0].payload.data).toMatchObject({ snapshot_id: s.id, volume_id: v.id, name: "first", size_gb: 1 });
  }, 120_000);

  it("shows the snapshotter's error while it retries, is ready when it succeeds, and fails when the error outlasts 10 minutes", async () => {
    const v = (await req(w.memberA, "POST", "/api/v1/storage/volumes", { name: "flaky", size_gb: 1 })).body as {
      id: string;
    };
    const ask = async (name: string) => {
      const s = (await req(w.memberA, "POST", `/api/v1/storage/volumes/${v.id}/snapshots`, { name })).body as {
        id: string;
      };
      const k8sName = `berth-${s.id.replace("_", "-")}`;
      await passUntil(
        async () => (await gpu.request("GET", `${SNAP}/namespaces/${NS}/volumesnapshots/${k8sName}`)).status === 200,
        "the VolumeSnapshot",
      );
      return { id: s.id, k8sName };
    };
    const error = (message: string) => ({ message, time: new Date().toISOString() });

    // The plugin refuses a volume still mounted (a session just paused); the snapshotter tries again.
    const first = await ask("x");
    const mounted = "rpc error: code = FailedPrecondition desc = the volume is mounted writable";
    await controllerSays(first.k8sName, { readyToUse: false, error: error(mounted) });
    await passUntil(async () => (await snapshotOf(v.id, first.id)).failure === mounted, "the error shown");
    expect((await snapshotOf(v.id, first.id)).state).toBe("creating");
    // Its next try succeeds; the controller keeps the last error beside readyToUse.
    await controllerSays(first.k8sName, { readyToUse: true, restoreSize: "1Gi", error: error(mounted) });
    await passUntil(async () => (await snapshotOf(v.id, first.id)).state === "ready", "ready");
    expect((await snapshotOf(v.id, first.id)).failure).toBeNull();

    // An error that lasts: asked for 11 minutes ago and still refused.
    const second = await ask("y");
    await controllerSays(second.k8sName, {
      readyToUse: false,
      error: error("rpc error: code = ResourceExhausted desc = no room for the snapshot"),
    });
    await passUntil(async () => (await snapshotOf(v.id, second.id)).failure !== null, "the error shown");
    await t.database
      .db("volume_snapshots")
      .where({ id: second.id })
      .update({ created_at: new Date(Date.now() - 11 * 60_000) });
    await passUntil(async () => (await snapshotOf(v.id, second.id)).state === "failed", "failed");
    expect((await snapshotOf(v.id, second.id)).failure).toContain("no room for the snapshot");
  }, 120_000);

  it("fails a snapshot on a cluster that does not serve the snapshot API, saying what to install", async () => {
    const v = (await req(w.memberA, "POST", "/api/v1/storage/volumes", { name: "old", size_gb: 1, pool: "nosnap" }))
      .body as { id: string };
    const s = (await req(w.memberA, "POST", `/api/v1/storage/volumes/${v.id}/snapshots`, { name: "x" })).body as {
      id: string;
    };
    await passUntil(async () => (await snapshotOf(v.id, s.id)).state === "failed", "failed");
    const got = await snapshotOf(v.id, s.id);
    expect(got).toMatchObject({ cluster: "clu_bare" });
    expect(got.failure).toMatch(/does not serve snapshot\.storage\.k8s\.io\/v1/);
  }, 60_000);
});
