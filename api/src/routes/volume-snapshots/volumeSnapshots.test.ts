import { HttpKube } from "@berth/controllers/kube";

// Volume snapshots over HTTP, against the bed's management apiserver (Volume and Session resources) and
// real Postgres. The worker is not running here: snapshots stay `creating` until a test moves a row as the
// worker would after reading the driver's answer (api/src/worker/snapshots.bed.test.ts does it for real).

import { loadCrds } from "@berth/crds/manifests";
import { type Fleet, kubeConfigFrom, startFleet } from "@berth/e2e";
import { ApiextensionsV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installDefaultCatalog } from "../../bootstrap/catalog.ts";
import { aGpuCluster } from "../../db/operations/sessions/sessions.test-support.ts";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  itBehavesPerRole,
  startIdentityTestApi,
  type TestUser,
} from "../../domain/identity/identity.test-support.ts";

let fleet: Fleet;
let kc: KubeConfig;
let t: IdentityTestApi;
let w: IdentityWorld;
/** memberA's volume, snapshot by the per-role cases. */
let shared: { id: string };

const GROUP = { group: "berth.dev", version: "v1alpha1" };
const custom = () => kc.makeApiClient(CustomObjectsApi);

beforeAll(async () => {
  fleet = await startFleet({ clusters: [{ name: "mgmt", kind: "management" }] });
  kc = kubeConfigFrom(fleet.cluster("mgmt").kubeconfig);
  const ext = kc.makeApiClient(ApiextensionsV1Api);
  for (const crd of loadCrds()) await ext.createCustomResourceDefinition({ body: crd as never });
  const kube = new HttpKube(kc);
  await installDefaultCatalog(kube).finally(() => kube.close()); // 500 GB of volumes per user
  for (const plural of ["pools", "volumes", "sessions"]) {
    for (let i = 0; ; i++) {
      try {
        await custom().listClusterCustomObject({ ...GROUP, plural });
        break;
      } catch (e) {
        if (i > 100) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
  t = await startIdentityTestApi({ kubeConfig: kc });
  w = await anIdentityWorld(t);
  await aGpuCluster(t.database.db, "clu_east", 8);
  const pool = await req(w.superAdmin, "POST", "/api/v1/storage/pools", {
    name: "fast",
    cluster: "clu_east",
    storage_class: "berth-fast",
    manual_capacity_gb: 5000,
  });
  expect(pool.status, JSON.stringify(pool.body)).toBe(201);
  shared = await aVolume(w.memberA, { size_gb: 2 });
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await fleet?.stop();
});

const req = (u: TestUser, method: string, path: string, json?: unknown, headers?: Record<string, string>) =>
  t.request(method, path, { token: u.token, ...(json !== undefined ? { json } : {}), ...(headers ? { headers } : {}) });

const rnd = () => Math.random().toString(36).slice(2, 10);

async function aVolume(u: TestUser, body: Record<string, unknown> = {}) {
  const r = await req(u, "POST", "/api/v1/storage/volumes", { name: `v-${rnd()}`, size_gb: 10, ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: string; name: string; size_gb: number };
}

async function aSnapshot(u: TestUser, volumeId: string, name = `s-${rnd()}`) {
  const r = await req(u, "POST", `/api/v1/storage/volumes/${volumeId}/snapshots`, { name });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  return r.body as { id: string; name: string; state: string; size_gb: number };
}

/** What the worker records once the driver says the snapshot is ready to use. */
async function driverSaysReady(id: string) {
  await t.database
    .db("volume_snapshots")
    .where({ id })
    .update({
      state: "ready",
      cluster_id: "clu_east",
      restore_size_bytes: 2 * 1024 ** 3,
      ready_at: new Date(),
    });
}

async function aSession(volumeId: string, opts: { readOnly?: boolean; desiredState?: string } = {}) {
  const namespace = w.orgA.id.replace("_", "-").toLowerCase();
  const name = `ses-${rnd().padEnd(8, "0")}${"a".repeat(12)}`.slice(0, 24);
  await custom().createNamespacedCustomObject({
    ...GROUP,
    plural: "sessions",
    namespace,
    body: {
      apiVersion: "berth.dev/v1alpha1",
      kind: "Session",
      metadata: { name, namespace },
      spec: {
        owner: w.memberA.id,
        organization: w.orgA.id,
        offering: "h100",
        preset: "gpu-small",
        image: "jupyterlab",
        ...(opts.desiredState ? { desiredState: opts.desiredState } : {}),
        volumes: [
          {
            volume: volumeId.replace("_", "-"),
            mountPath: "/home/jovyan/work",
            ...(opts.readOnly ? { readOnly: true } : {}),
          },
        ],
      },
    },
  });
  return { namespace, name, id: name.replace("-", "_") };
}

describe("volume snapshots", () => {
  it("takes a snapshot as creating, lists it under its volume, and records who asked in the audit log", async () => {
    const v = await aVolume(w.memberA, { size_gb: 3 });
    const s = await aSnapshot(w.memberA, v.id, "before-upgrade");
    expect(s).toMatchObject({
      name: "before-upgrade",
      volume_id: v.id,
      state: "creating",
      size_gb: 3,
      restore_size_bytes: null,
      failure: null,
      cluster: null,
      created_by: w.memberA.id,
      ready_at: null,
    });
    expect(s.id).toMatch(/^snap_[a-z0-9]{20}$/);
    const list = await req(w.memberA, "GET", `/api/v1/storage/volumes/${v.id}/snapshots`);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ data: [{ id: s.id }], pagination: { total: 1 } });
    expect((await req(w.memberA, "GET", `/api/v1/storage/volumes/${v.id}/snapshots/${s.id}`)).body.id).toBe(s.id);
    const audit = await t.database
      .db("audit_log")
      .where({ action: "storage.snapshot.create", target_kind: "snapshot", target_id: s.id, outcome: "success" });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_id: w.memberA.id, organization_id: w.orgA.id });
  });

  it("refuses a second snapshot of the same name on a volume: 409 already_exists", async () => {
    const v = await aVolume(w.memberA, { size_gb: 1 });
    await aSnapshot(w.memberA, v.id, "nightly");
    const dup = await req(w.memberA, "POST", `/api/v1/storage/volumes/${v.id}/snapshots`, { name: "nightly" });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({ code: "already_exists", details: { name: "nightly" } });
  });

  it("refuses a volume a running session writes to, naming the session, and takes it once that session is paused", async () => {
    const v = await aVolume(w.memberA, { size_gb: 1 });
    const reader = await aSession(v.id, { readOnly: true });
    expect((await req(w.memberA, "POST", `/api/v1/storage/volumes/${v.id}/snapshots`, { name: "ro" })).status).toBe(
      202,
    );
    const writer = await aSession(v.id);
    const r = await req(w.memberA, "POST", `/api/v1/storage/volumes/${v.id}/snapshots`, { name: "rw" });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ code: "volume_mounted", details: { volume: v.id, sessions: [writer.id] } });
    expect(r.body.error.details.sessions).not.toContain(reader.id);
    await custom().patchNamespacedCustomObjectStatus({
      ...GROUP,
      plural: "sessions",
      namespace: writer.namespace,
      name: writer.name,
      body: [{ op: "add", path: "/status", value: { phase: "Paused" } }],
    });
    expect((await req(w.memberA, "POST", `/api/v1/storage/volumes/${v.id}/snapshots`, { name: "rw" })).status).toBe(
      202,
    );
  });

  it("counts snapshots against the storage quota with volumes: 403 quota_exceeded naming both", async () => {
    // adminB's own 500 GB: a 300 GB volume and its snapshot do not fit.
    const v = await aVolume(w.adminB, { size_gb: 300 });
    const r = await req(w.adminB, "POST", `/api/v1/storage/volumes/${v.id}/snapshots`, { name: "big" });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({
      code: "quota_exceeded",
      details: { limit: "max_volume_gb_per_user", value: 500, current_gb: 300, snapshot_gb: 0, requested_gb: 300 },
    });
    const small = await aVolume(w.adminB, { size_gb: 100 });
    await aSnapshot(w.adminB, small.id);
    // 300 + 100 + a 100 GB snapshot: a new 1 GB volume still fits, 2 GB more do not.
    const over = await req(w.adminB, "POST", "/api/v1/storage/volumes", { name: `v-${rnd()}`, size_gb: 2 });
    expect(over.status).toBe(403);
    expect(over.body.error.details).toMatchObject({ current_gb: 500, snapshot_gb: 100 });
  });

  it("restores a ready snapshot into a new volume, and refuses one that is not ready", async () => {
    const v = await aVolume(w.memberA, { size_gb: 2 });
    const s = await aSnapshot(w.memberA, v.id);
    const early = await req(w.memberA, "POST", `/api/v1/storage/volumes/${v.id}/snapshots/${s.id}/restore`, {
      name: "copy",
    });
    expect(early.status).toBe(409);
    expect(early.body.error).toMatchObject({ code: "snapshot_not_ready", details: { state: "creating" } });
    await driverSaysReady(s.id);
    const r = await req(w.memberA, "POST", `/api/v1/storage/volumes/${v.id}/snapshots/${s.id}/restore`, {
      name: `copy-${s.id}`,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({
      name: `copy-${s.id}`,
      size_gb: 2,
      pool: "fast",
      owner: { kind: "user", id: w.memberA.id },
      restored_from: s.id,
      restoring: true,
    });
    expect(r.body.id).not.toBe(v.id);
    // While the new volume is being made from it, the snapshot stays.
    const del = await req(w.memberA, "DELETE", `/api/v1/storage/volumes/${v.id}/snapshots/${s.id}`);
    expect(del.status).toBe(409);
    expect(del.body.error).toMatchObject({ code: "snapshot_restoring", details: { volumes: [r.body.id] } });
    // A name the caller already uses: 409 already_exists; smaller than the snapshot: 400 naming size_gb.
    const clash = await req(w.memberA, "POST", `/api/v1/storage/volumes/${v.id}/snapshots/${s.id}/restore`, {
      name: v.name,
    });
    expect(clash.status).toBe(409);
    expect(clash.body.error.code).toBe("already_exists");
    const small = await req(w.memberA, "POST", `/api/v1/storage/volumes/${v.id}/snapshots/${s.id}/restore`, {
      name: "tiny",
      size_gb: 1,
    });
    expect(small.status).toBe(400);
    expect(small.body.error.details.issues[0].path).toEqual(["body", "size_gb"]);
    // Restored (the worker saw its claim bind): the snapshot may go.
    await t.database.db("volumes").where({ id: r.body.id }).update({ restored_at: new Date() });
    const gone = await req(w.memberA, "DELETE", `/api/v1/storage/volumes/${v.id}/snapshots/${s.id}`);
    expect(gone.status).toBe(202);
    expect(gone.body.state).toBe("deleting");
  });

  it("does not show another organization's snapshot, even with the right snapshot id", async () => {
    const s = await aSnapshot(w.memberA, shared.id);
    const mine = await aVolume(w.memberB, { size_gb: 1 });
    for (const path of [
      `/api/v1/storage/volumes/${shared.id}/snapshots/${s.id}`,
      `/api/v1/storage/volumes/${mine.id}/snapshots/${s.id}`,
    ]) {
      const r = await req(w.memberB, "GET", path);
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe("not_found");
    }
  });

  itBehavesPerRole(
    [
      {
        name: "/api/v1/storage/volumes/:volumeId/snapshots",
        method: "POST",
        path: () => `/api/v1/storage/volumes/${shared.id}/snapshots`,
        body: () => ({ name: `s-${rnd()}` }),
        allowed: [
          { as: "memberA", status: 202 },
          { as: "adminA", status: 202 },
        ],
        refused: [
          { as: "memberB", status: 404, why: "another organization's volume" },
          { as: "outsider", status: 404, why: "no membership" },
          { as: "orgMemberA", status: 404, why: "not theirs to see" },
        ],
        malformed: { name: "", extra: 1 },
      },
      {
        name: "/api/v1/storage/volumes/:volumeId/snapshots",
        method: "GET",
        path: () => `/api/v1/storage/volumes/${shared.id}/snapshots`,
        allowed: [
          { as: "memberA", status: 200 },
          { as: "adminA", status: 200 },
        ],
        refused: [
          { as: "memberB", status: 404, why: "another organization's volume" },
          { as: "adminB", status: 404, why: "admin of another organization" },
        ],
      },
      {
        name: "/api/v1/storage/volumes/:volumeId/snapshots/:snapshotId",
        method: "DELETE",
        path: async () =>
          `/api/v1/storage/volumes/${shared.id}/snapshots/${(await aSnapshot(w.memberA, shared.id)).id}`,
        allowed: [{ as: "memberA", status: 202 }],
        refused: [
          { as: "memberB", status: 404, why: "another organization's snapshot" },
          { as: "adminB", status: 404, why: "admin of another organization" },
        ],
      },
      {
        name: "/api/v1/storage/volumes/:volumeId/snapshots/:snapshotId/restore",
        method: "POST",
        path: async () => {
          const s = await aSnapshot(w.memberA, shared.id);
          await driverSaysReady(s.id);
          return `/api/v1/storage/volumes/${shared.id}/snapshots/${s.id}/restore`;
        },
        body: () => ({ name: `r-${rnd()}` }),
        allowed: [{ as: "memberA", status: 201 }],
        refused: [
          { as: "memberB", status: 404, why: "another organization's snapshot" },
          { as: "outsider", status: 404, why: "no membership" },
        ],
        malformed: { name: 7, size_gb: 1.5 },
      },
    ],
    () => ({ t, w }),
  );

  it("answers 400 for ids that are not a volume's or a snapshot's", async () => {
    const r = await req(w.memberA, "GET", `/api/v1/storage/volumes/${shared.id}/snapshots/nope`);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("validation_failed");
  });
});
