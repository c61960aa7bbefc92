import { HttpKube } from "@berth/controllers/kube";

// Storage pools and volumes over HTTP, against a real kube-apiserver (the test bed's management cluster,
// with the generated CRDs and the default catalog) and real Postgres: the Pool and Volume resources are
// the source of truth, quotas come from the resource policy, the capacity gate reads one pool at a time,
// and another organization's volume does not exist for you (BOLA, every route).

import { resourcePath, VolumeKind } from "@berth/crds";
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
import { applyStorageReport } from "../../domain/storage/readings.ts";

let fleet: Fleet;
let kc: KubeConfig;
let t: IdentityTestApi;
let w: IdentityWorld;

const GROUP = { group: "berth.dev", version: "v1alpha1" };
const custom = () => kc.makeApiClient(CustomObjectsApi);

beforeAll(async () => {
  fleet = await startFleet({ clusters: [{ name: "mgmt", kind: "management" }] });
  kc = kubeConfigFrom(fleet.cluster("mgmt").kubeconfig);
  const ext = kc.makeApiClient(ApiextensionsV1Api);
  for (const crd of loadCrds()) await ext.createCustomResourceDefinition({ body: crd as never });
  const kube = new HttpKube(kc);
  await installDefaultCatalog(kube).finally(() => kube.close()); // the global policy: 500 GB of volumes per user
  // Fresh CRDs answer 429 until their storage is ready: wait for the kinds used here.
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
  await aGpuCluster(t.database.db, "clu_west", 8);
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await fleet?.stop();
});

const as = (u: TestUser) => ({ token: u.token });
const req = (u: TestUser, method: string, path: string, json?: unknown, headers?: Record<string, string>) =>
  t.request(method, path, { ...as(u), ...(json !== undefined ? { json } : {}), ...(headers ? { headers } : {}) });

async function aVolume(u: TestUser, body: Record<string, unknown> = {}) {
  const r = await req(u, "POST", "/api/v1/storage/volumes", {
    name: `v-${Math.random().toString(36).slice(2)}`,
    size_gb: 10,
    ...body,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: string; name: string; size_gb: number };
}

describe("storage pools", () => {
  it("creates the first pool as the default, as a Pool resource kubectl shows", async () => {
    const r = await req(w.superAdmin, "POST", "/api/v1/storage/pools", {
      name: "fast",
      cluster: "clu_east",
      storage_class: "berth-fast",
      manual_capacity_gb: 300,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({
      name: "fast",
      cluster: "clu_east",
      storage_class: "berth-fast",
      sharing: "all",
      default: true,
      capacity: { source: "manual", total_gb: 300, available_gb: 300, provisioned_gb: 0 },
      volumes: 0,
    });
    const cr = (await custom().getClusterCustomObject({ ...GROUP, plural: "pools", name: "fast" })) as {
      spec: Record<string, unknown>;
    };
    expect(cr.spec).toMatchObject({
      cluster: "clu_east",
      storageClass: "berth-fast",
      sharing: "all",
      manualCapacityGb: 300,
      default: true,
    });
    // kubectl get pools: class, sharing, capacity, source, age.
    const crd = (await kc
      .makeApiClient(ApiextensionsV1Api)
      .readCustomResourceDefinition({ name: "pools.berth.dev" })) as {
      spec: { versions: { additionalPrinterColumns?: { name: string }[] }[] };
    };
    expect(crd.spec.versions[0]?.additionalPrinterColumns?.map((c) => c.name)).toEqual(
      expect.arrayContaining(["Storage Class", "Sharing", "Capacity GB", "Source", "Age"]),
    );
  });

  it("adds pools that are not the default, with sharing selected", async () => {
    const small = await req(w.superAdmin, "POST", "/api/v1/storage/pools", {
      name: "small",
      cluster: "clu_west",
      storage_class: "berth-small",
      sharing: "selected",
      clusters: ["clu_west"],
      manual_capacity_gb: 250,
    });
    expect(small.status, JSON.stringify(small.body)).toBe(201);
    expect(small.body).toMatchObject({ default: false, sharing: "selected", clusters: ["clu_west"] });
    const list = await req(w.superAdmin, "GET", "/api/v1/storage/pools");
    expect(list.status).toBe(200);
    expect(list.body.data.map((p: { name: string }) => p.name)).toEqual(["fast", "small"]);
  });

  it("refuses bad pools with the field to fix, and writes nothing", async () => {
    const bad = async (body: Record<string, unknown>, field: string) => {
      const r = await req(w.superAdmin, "POST", "/api/v1/storage/pools", {
        name: "bad",
        cluster: "clu_east",
        storage_class: "c",
        ...body,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error.code).toBe("validation_failed");
      expect(r.body.error.details.issues.map((i: { path: string[] }) => i.path.join("."))).toContain(field);
    };
    await bad({ cluster: "clu_nowhere" }, "body.cluster");
    await bad({ sharing: "selected" }, "body.clusters");
    await bad({ sharing: "selected", clusters: ["clu_nowhere"] }, "body.clusters.0");
    await bad({ storage_class: "Not A Class" }, "body.storage_class");
    await bad({ manual_capacity_gb: -5 }, "body.manual_capacity_gb");
    await bad({ manual_capacity_gb: "300" }, "body.manual_capacity_gb");
    const again = await req(w.superAdmin, "POST", "/api/v1/storage/pools", {
      name: "fast",
      cluster: "clu_east",
      storage_class: "x",
    });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("already_exists");
    const list = await req(w.superAdmin, "GET", "/api/v1/storage/pools");
    expect(list.body.data.map((p: { name: string }) => p.name)).toEqual(["fast", "small"]);
  });

  it("changes a pool's stated capacity and moves the default mark", async () => {
    const r = await req(w.superAdmin, "PATCH", "/api/v1/storage/pools/small", { default: true });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((await req(w.superAdmin, "GET", "/api/v1/storage/pools/fast")).body.default).toBe(false);
    await req(w.superAdmin, "PATCH", "/api/v1/storage/pools/fast", { default: true });
    expect((await req(w.superAdmin, "GET", "/api/v1/storage/pools/small")).body.default).toBe(false);
    const cleared = await req(w.superAdmin, "PATCH", "/api/v1/storage/pools/small", { manual_capacity_gb: null });
    expect(cleared.body).toMatchObject({ manual_capacity_gb: null, capacity: null });
    await req(w.superAdmin, "PATCH", "/api/v1/storage/pools/small", { manual_capacity_gb: 250 });
    const bad = await req(w.superAdmin, "PATCH", "/api/v1/storage/pools/small", { sharing: "selected", clusters: [] });
    expect(bad.status).toBe(400);
  });

  it("refuses to delete a pool with volumes, and deletes an empty one", async () => {
    await req(w.superAdmin, "POST", "/api/v1/storage/pools", {
      name: "spare",
      cluster: "clu_east",
      storage_class: "s",
    });
    const v = await aVolume(w.memberB, { pool: "spare", size_gb: 1 });
    const refused = await req(w.superAdmin, "DELETE", "/api/v1/storage/pools/spare");
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: "pool_in_use", details: { pool: "spare", volumes: 1 } });
    const moved = await req(w.superAdmin, "PATCH", "/api/v1/storage/pools/spare", { storage_class: "other" });
    expect(moved.body.error.code).toBe("pool_in_use");
    // A deleted volume's data stays on the pool for its grace period: the pool is still in use.
    expect((await req(w.memberB, "DELETE", `/api/v1/storage/volumes/${v.id}`)).status).toBe(200);
    expect((await req(w.superAdmin, "DELETE", "/api/v1/storage/pools/spare")).body.error.code).toBe("pool_in_use");
    await t.database
      .db("volumes")
      .where({ id: v.id })
      .update({ purge_after: new Date(t.clock.now().getTime() - 1000) });
    expect((await req(w.superAdmin, "DELETE", "/api/v1/storage/pools/spare")).status).toBe(204);
    expect((await req(w.superAdmin, "GET", "/api/v1/storage/pools/spare")).status).toBe(404);
  });

  itBehavesPerRole(
    [
      {
        name: "/api/v1/storage/pools",
        method: "GET",
        path: () => "/api/v1/storage/pools",
        allowed: [{ as: "superAdmin", status: 200 }],
        refused: [
          { as: "adminA", status: 403, why: "organization admins do not manage pools" },
          { as: "memberA", status: 403, why: "members do not manage pools" },
        ],
      },
      {
        name: "/api/v1/storage/pools",
        method: "POST",
        path: () => "/api/v1/storage/pools",
        body: () => ({
          name: `p-${Math.random().toString(36).slice(2, 8)}`,
          cluster: "clu_east",
          storage_class: "x",
          default: false,
        }),
        allowed: [{ as: "superAdmin", status: 201 }],
        refused: [{ as: "adminA", status: 403, why: "not a super_admin" }],
        malformed: { name: "UPPER", cluster: 3 },
      },
      {
        name: "/api/v1/storage/pools/:pool",
        method: "PATCH",
        path: () => "/api/v1/storage/pools/fast",
        body: () => ({ manual_capacity_gb: 300 }),
        allowed: [{ as: "superAdmin", status: 200 }],
        refused: [{ as: "adminB", status: 403, why: "not a super_admin" }],
        malformed: { manual_capacity_gb: 1.5 },
      },
      {
        name: "/api/v1/storage/pools/:pool",
        method: "DELETE",
        path: async () => {
          await req(w.superAdmin, "POST", "/api/v1/storage/pools", {
            name: "doomed",
            cluster: "clu_east",
            storage_class: "d",
            default: false,
          });
          return "/api/v1/storage/pools/doomed";
        },
        allowed: [{ as: "superAdmin", status: 204 }],
        refused: [{ as: "memberA", status: 403, why: "not a super_admin" }],
      },
    ],
    () => ({ t, w }),
  );
});

describe("volumes", () => {
  it("creates a volume on the default pool, once per Idempotency-Key, as a Volume resource", async () => {
    const key = `vol-${Date.now()}`;
    const body = { name: "home", size_gb: 20 };
    const first = await req(w.memberA, "POST", "/api/v1/storage/volumes", body, { "Idempotency-Key": key });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toMatchObject({
      name: "home",
      size_gb: 20,
      pool: "fast",
      organization_id: w.orgA.id,
      owner: { kind: "user", id: w.memberA.id },
      bound_cluster: null,
      locked: false,
    });
    expect(first.body.id).toMatch(/^vol_[a-z0-9]{20}$/);
    const again = await req(w.memberA, "POST", "/api/v1/storage/volumes", body, { "Idempotency-Key": key });
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(await t.database.db("volumes").where({ owner_id: w.memberA.id, name: "home" }).count("* as n")).toEqual([
      { n: "1" },
    ]);
    const cr = (await custom().getNamespacedCustomObject({
      ...GROUP,
      plural: "volumes",
      namespace: w.orgA.id.replace("_", "-").toLowerCase(),
      name: first.body.id.replace("_", "-"),
    })) as { spec: Record<string, unknown>; metadata: { labels: Record<string, string> } };
    expect(cr.spec).toMatchObject({
      sizeGb: 20,
      pool: "fast",
      organization: w.orgA.id,
      owner: { kind: "user", id: w.memberA.id },
    });
    expect(cr.metadata.labels["berth.dev/volume-id"]).toBe(first.body.id);
    // The same name again for the same owner: refused, nothing new.
    const dup = await req(w.memberA, "POST", "/api/v1/storage/volumes", body);
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe("already_exists");
  });

  it("creates a project's volume for a member of the project, and not for others", async () => {
    const v = await aVolume(w.memberA, { project_id: w.projectA.id });
    const detail = await req(w.projectAdminA, "GET", `/api/v1/storage/volumes/${v.id}`);
    expect(detail.body.owner).toEqual({ kind: "project", id: w.projectA.id });
    const foreign = await req(w.memberB, "POST", "/api/v1/storage/volumes", {
      name: "x",
      size_gb: 1,
      project_id: w.projectA.id,
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.details.issues[0].path).toEqual(["body", "project_id"]);
  });

  it("refuses bad sizes, unknown pools and unknown fields with validation_failed, and writes nothing", async () => {
    const before = await t.database.db("volumes").count("* as n");
    for (const size_gb of [0, -1, 1.5, "10", 1e12, null, true]) {
      const r = await req(w.memberA, "POST", "/api/v1/storage/volumes", { name: "bad", size_gb });
      expect(r.status, `${size_gb}`).toBe(400);
      expect(r.body.error.code).toBe("validation_failed");
      expect(r.body.error.details.issues[0].path).toEqual(["body", "size_gb"]);
    }
    const pool = await req(w.memberA, "POST", "/api/v1/storage/volumes", { name: "bad", size_gb: 1, pool: "nowhere" });
    expect(pool.status).toBe(400);
    expect(pool.body.error.details.issues[0]).toMatchObject({ path: ["body", "pool"], code: "invalid_reference" });
    const extra = await req(w.memberA, "POST", "/api/v1/storage/volumes", { name: "bad", size_gb: 1, mount: "/" });
    expect(extra.status).toBe(400);
    expect(await t.database.db("volumes").count("* as n")).toEqual(before);
  });

  it("refuses what exceeds max_volume_gb_per_user with quota_exceeded saying what", async () => {
    const u = await t.aUser();
    await t.member(u, w.orgA.id, null, "member");
    await aVolume(u, { size_gb: 200 });
    const r = await req(u, "POST", "/api/v1/storage/volumes", { name: "more", size_gb: 301 });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({
      code: "quota_exceeded",
      details: {
        limit: "max_volume_gb_per_user",
        value: 500,
        current_gb: 200,
        snapshot_gb: 0,
        requested_gb: 301,
        scope: "global",
      },
    });
  });

  it("gates on the one pool the volume goes to, never on the pools added together", async () => {
    const u = await t.aUser();
    await t.member(u, w.orgB.id, null, "member");
    // fast: 300 GB stated, minus what is on it; small: 250 minus its own. Together they would hold 400.
    const r = await req(u, "POST", "/api/v1/storage/volumes", { name: "big", size_gb: 400 });
    expect(r.status, JSON.stringify(r.body)).toBe(409);
    expect(r.body.error.code).toBe("pool_capacity_exceeded");
    expect(r.body.error.details).toMatchObject({ requested_gb: 400, pool: "fast" });
    const pools = r.body.error.details.pools as { pool: string; available_gb: number; source: string }[];
    expect(pools.map((p) => p.pool).sort()).toEqual(expect.arrayContaining(["fast", "small"]));
    expect(r.body.error.details.largest_available_gb).toBe(Math.max(...pools.map((p) => p.available_gb ?? 0)));
    expect(r.body.error.details.largest_available_gb).toBeLessThan(400);
  });

  it("grows a volume, renames it, and refuses to shrink it", async () => {
    const v = await aVolume(w.memberA, { size_gb: 5 });
    const grown = await req(w.memberA, "PATCH", `/api/v1/storage/volumes/${v.id}`, { size_gb: 8, name: "renamed" });
    expect(grown.status, JSON.stringify(grown.body)).toBe(200);
    expect(grown.body).toMatchObject({ size_gb: 8, name: "renamed", mounts: [] });
    const shrink = await req(w.memberA, "PATCH", `/api/v1/storage/volumes/${v.id}`, { size_gb: 4 });
    expect(shrink.status).toBe(400);
    expect(shrink.body.error.details.issues[0]).toMatchObject({ path: ["body", "size_gb"], code: "too_small" });
    const huge = await req(w.memberA, "PATCH", `/api/v1/storage/volumes/${v.id}`, { size_gb: 100_000 });
    expect(["quota_exceeded", "pool_capacity_exceeded"]).toContain(huge.body.error.code);
    expect((await req(w.memberA, "GET", `/api/v1/storage/volumes/${v.id}`)).body.size_gb).toBe(8);
  });

  it("locked: cannot be resized or deleted, the reason is shown; only administrators lock", async () => {
    const v = await aVolume(w.memberA, { size_gb: 2 });
    const self = await req(w.memberA, "POST", `/api/v1/storage/volumes/${v.id}/lock`, { reason: "mine" });
    expect(self.status).toBe(403);
    const locked = await req(w.adminA, "POST", `/api/v1/storage/volumes/${v.id}/lock`, { reason: "legal hold" });
    expect(locked.body).toMatchObject({ locked: true, lock_reason: "legal hold" });
    for (const [method, body] of [
      ["PATCH", { size_gb: 3 }],
      ["DELETE", undefined],
    ] as const) {
      const r = await req(w.memberA, method, `/api/v1/storage/volumes/${v.id}`, body);
      expect(r.status).toBe(409);
      expect(r.body.error).toMatchObject({ code: "volume_locked", details: { reason: "legal hold" } });
    }
    const unlocked = await req(w.adminA, "POST", `/api/v1/storage/volumes/${v.id}/unlock`);
    expect(unlocked.body).toMatchObject({ locked: false, lock_reason: null });
    expect((await req(w.memberA, "DELETE", `/api/v1/storage/volumes/${v.id}`)).status).toBe(200);
  });

  it("refuses to delete a volume a live session mounts, naming the session", async () => {
    const v = await aVolume(w.memberA, { size_gb: 1 });
    const namespace = w.orgA.id.replace("_", "-").toLowerCase();
    const session = {
      apiVersion: "berth.dev/v1alpha1",
      kind: "Session",
      metadata: { name: "ses-aaaaaaaaaaaaaaaaaaaa", namespace },
      spec: {
        owner: w.memberA.id,
        organization: w.orgA.id,
        offering: "h100",
        preset: "gpu-small",
        image: "jupyterlab",
        volumes: [{ volume: v.id.replace("_", "-"), mountPath: "/home/jovyan/work" }],
      },
    };
    await custom().createNamespacedCustomObject({ ...GROUP, plural: "sessions", namespace, body: session });
    const detail = await req(w.memberA, "GET", `/api/v1/storage/volumes/${v.id}`);
    expect(detail.body.mounts).toEqual([
      { session_id: "ses_aaaaaaaaaaaaaaaaaaaa", read_only: false, mount_path: "/home/jovyan/work" },
    ]);
    const r = await req(w.memberA, "DELETE", `/api/v1/storage/volumes/${v.id}`);
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ code: "volume_in_use", details: { sessions: ["ses_aaaaaaaaaaaaaaaaaaaa"] } });
    await custom().patchNamespacedCustomObject({
      ...GROUP,
      plural: "sessions",
      namespace,
      name: "ses-aaaaaaaaaaaaaaaaaaaa",
      body: [{ op: "replace", path: "/spec/desiredState", value: "Terminated" }],
    });
    expect((await req(w.memberA, "DELETE", `/api/v1/storage/volumes/${v.id}`)).status).toBe(200);
    expect((await req(w.memberA, "GET", `/api/v1/storage/volumes/${v.id}`)).status).toBe(404);
  });

  it("lists a session's volumes with their mounts, for whoever sees the session only", async () => {
    const v = await aVolume(w.memberA, { size_gb: 4 });
    const namespace = w.orgA.id.replace("_", "-").toLowerCase();
    const name = "ses-bbbbbbbbbbbbbbbbbbbb";
    await t.database.db("sessions").insert({
      id: "ses_bbbbbbbbbbbbbbbbbbbb",
      cr_name: name,
      namespace,
      owner_id: w.memberA.id,
      organization_id: w.orgA.id,
      offering: "h100",
      preset: "gpu-small",
      image: "jupyterlab",
      gpu_model: "NVIDIA-H100-80GB-HBM3",
      gpu_count: 1,
      hourly_credit_rate: "4000000",
    });
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
          volumes: [{ volume: v.id.replace("_", "-"), mountPath: "/data", readOnly: true }],
        },
      },
    });
    const r = await req(w.memberA, "GET", "/api/v1/storage/volumes?session_id=ses_bbbbbbbbbbbbbbbbbbbb");
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toHaveLength(1);
    expect(r.body.data[0]).toMatchObject({
      id: v.id,
      size_gb: 4,
      mounts: [{ session_id: "ses_bbbbbbbbbbbbbbbbbbbb", read_only: true, mount_path: "/data" }],
    });
    for (const u of [w.memberB, w.orgMemberA, w.outsider]) {
      const no = await req(u, "GET", "/api/v1/storage/volumes?session_id=ses_bbbbbbbbbbbbbbbbbbbb");
      expect(no.status).toBe(404);
    }
    expect((await req(w.memberA, "GET", "/api/v1/storage/volumes?session_id=nope")).status).toBe(400);
    await custom().deleteNamespacedCustomObject({ ...GROUP, plural: "sessions", namespace, name });
    await t.database.db("sessions").where({ id: "ses_bbbbbbbbbbbbbbbbbbbb" }).delete();
  });

  it("lists what the caller may see, and nothing of another organization", async () => {
    const mine = await aVolume(w.memberB, { size_gb: 1 });
    const listB = await req(w.memberB, "GET", "/api/v1/storage/volumes?size=100");
    expect(listB.body.data.map((v: { id: string }) => v.id)).toContain(mine.id);
    expect(listB.body.data.every((v: { organization_id: string }) => v.organization_id === w.orgB.id)).toBe(true);
    const listA = await req(w.adminA, "GET", "/api/v1/storage/volumes?size=100");
    expect(listA.body.data.length).toBeGreaterThan(0);
    expect(listA.body.data.every((v: { organization_id: string }) => v.organization_id === w.orgA.id)).toBe(true);
    expect(listA.body.pagination.total).toBe(listA.body.data.length);
    const outsider = await req(w.outsider, "GET", "/api/v1/storage/volumes");
    expect(outsider.body).toMatchObject({ data: [], pagination: { total: 0 } });
    const orgMember = await req(w.orgMemberA, "GET", "/api/v1/storage/volumes?size=100");
    expect(orgMember.body.data.some((v: { owner: { id: string } }) => v.owner.id === w.memberA.id)).toBe(false);
  });

  describe("mounting in a session", () => {
    const session = (u: TestUser, volumes: unknown[]) =>
      req(u, "POST", "/api/v1/sessions", { offering: "h100", preset: "gpu-small", image: "jupyterlab", volumes });

    it("refuses mount paths that escape or cover system paths, before anything is written", async () => {
      const v = await aVolume(w.memberA, { size_gb: 1 });
      for (const mount_path of [
        "relative/dir",
        "/home/../etc",
        "/data/./x",
        "/",
        "/etc",
        "/proc/self",
        "/usr/lib",
        "/data//x",
        "/data/",
      ]) {
        const r = await session(w.memberA, [{ volume: v.id, mount_path }]);
        expect(r.status, mount_path).toBe(400);
        expect(r.body.error.code).toBe("validation_failed");
        expect(r.body.error.details.issues[0].path).toEqual(["body", "volumes", 0, "mount_path"]);
      }
      expect(await t.database.db("sessions").count("* as n")).toEqual([{ n: "0" }]);
    });

    it("does not mount another organization's volume, nor a colleague's that is not shared", async () => {
      const v = await aVolume(w.memberA, { size_gb: 1 });
      for (const u of [w.memberB, w.adminB, w.orgMemberA]) {
        const r = await session(u, [{ volume: v.id, mount_path: "/data" }]);
        expect(r.status, JSON.stringify(r.body)).toBe(400);
        expect(r.body.error.details.issues[0]).toMatchObject({
          path: ["body", "volumes", 0, "volume"],
          code: "invalid_reference",
        });
      }
    });

    it("refuses a pin away from the volume's claim, saying when the claim is released; shows the space measured on it", async () => {
      const v = await aVolume(w.memberA, { size_gb: 1 });
      const name = v.id.replace("_", "-");
      const all = (await custom().listClusterCustomObject({ ...GROUP, plural: "volumes" })) as {
        items: { metadata: { name: string; namespace: string } }[];
      };
      const namespace = all.items.find((i) => i.metadata.name === name)?.metadata.namespace as string;
      const setStatus = async (status: Record<string, unknown>) => {
        const k = new HttpKube(kc);
        try {
          const r = await k.request("PATCH", resourcePath(VolumeKind, { namespace, name, subresource: "status" }), {
            body: { status },
          });
          expect(r.status).toBe(200);
        } finally {
          k.close();
        }
      };
      const pinned = async (want: (r: Awaited<ReturnType<typeof req>>) => boolean) => {
        // The sessions' catalog caches volumes for a few seconds: ask until it has read the status.
        let r = await req(w.memberA, "POST", "/api/v1/sessions", {
          offering: "h100",
          preset: "gpu-small",
          image: "jupyterlab",
          cluster_id: "clu_west",
          volumes: [{ volume: v.id }],
        });
        for (let i = 0; i < 80 && !want(r); i++) {
          await new Promise((res) => setTimeout(res, 100));
          r = await req(w.memberA, "POST", "/api/v1/sessions", {
            offering: "h100",
            preset: "gpu-small",
            image: "jupyterlab",
            cluster_id: "clu_west",
            volumes: [{ volume: v.id }],
          });
        }
        return r;
      };
      // In use (the worker recorded its idle time at the bind): released 15 minutes after the last session.
      await setStatus({ boundCluster: "clu_east", claimName: `berth-${name}`, idleReleaseSeconds: 900 });
      // The space used, as the kubelet measured it: unknown until measured, and only the cluster that
      // holds the claim speaks for it.
      const usedGb = async () => (await req(w.memberA, "GET", `/api/v1/storage/volumes/${v.id}`)).body.used_gb;
      expect(await usedGb()).toBeNull();
      const report = (clusterId: string, used: number) => ({
        cluster_id: clusterId,
        observed_at: new Date().toISOString(),
        classes: [],
        volumes: [{ claim_name: `berth-${name}`, used_gb: used, node: "gpu-0" }],
      });
      await applyStorageReport(t.deps, "clu_west", report("clu_west", 4));
      expect(await usedGb()).toBeNull();
      await applyStorageReport(t.deps, "clu_east", report("clu_east", 1));
      expect(await usedGb()).toBe(1);
      // 1 GB used of 1: its owner hears it is nearly full, once, however often the same figure comes.
      await applyStorageReport(t.deps, "clu_east", report("clu_east", 1));
      const bell = await req(w.memberA, "GET", "/api/v1/notifications");
      const near = bell.body.data.filter((n: { kind: string }) => n.kind === "volume.near_quota");
      expect(near).toHaveLength(1);
      expect(near[0].title).toContain("100 % full");
      expect(
        (await req(w.memberB, "GET", "/api/v1/notifications")).body.data.map((n: { kind: string }) => n.kind),
      ).not.toContain("volume.near_quota");
      let r = await pinned((x) => x.body?.error?.code === "volume_on_another_cluster");
      expect(r.status).toBe(409);
      expect(r.body.error.details).toEqual({
        volume: name,
        bound_cluster: "clu_east",
        requested_cluster: "clu_west",
        releasing: false,
        release_after: null,
        idle_release_seconds: 900,
      });
      expect(r.body.error.message).toContain("15 minutes after its last session ends");
      // Idle: the worker recorded when it goes.
      await setStatus({ releaseAfter: "2026-11-26T07:00:00.000Z" });
      r = await pinned((x) => x.body?.error?.details?.release_after != null);
      expect(r.body.error.details).toMatchObject({ release_after: "2026-11-26T07:00:00.000Z", releasing: false });
      expect(r.body.error.message).toContain("released at 2026-11-26T07:00:00.000Z");
      // Being released: still refused (the claim is there until it is gone), and it says so.
      await setStatus({ releasingSince: "2026-11-26T07:00:00.000Z" });
      r = await pinned((x) => x.body?.error?.details?.releasing === true);
      expect(r.status).toBe(409);
      expect(r.body.error.message).toContain("being released now");
      expect(await t.database.db("sessions").where({ cluster_id: "clu_west" }).count("* as n")).toEqual([{ n: "0" }]);
    });

    it("rings a project's administrators when a project's volume is nearly full, not its members", async () => {
      // 1 GB: the default pool's stated capacity is nearly taken by the tests before.
      const v = await aVolume(w.memberA, { size_gb: 1, project_id: w.projectA.id });
      const name = v.id.replace("_", "-");
      const all = (await custom().listClusterCustomObject({ ...GROUP, plural: "volumes" })) as {
        items: { metadata: { name: string; namespace: string } }[];
      };
      const namespace = all.items.find((i) => i.metadata.name === name)?.metadata.namespace as string;
      const k = new HttpKube(kc);
      try {
        const r = await k.request("PATCH", resourcePath(VolumeKind, { namespace, name, subresource: "status" }), {
          body: { status: { boundCluster: "clu_east", claimName: `berth-${name}` } },
        });
        expect(r.status).toBe(200);
      } finally {
        k.close();
      }
      const report = (used: number) => ({
        cluster_id: "clu_east",
        observed_at: new Date().toISOString(),
        classes: [],
        volumes: [{ claim_name: `berth-${name}`, used_gb: used, node: "gpu-0" }],
      });
      const near = async (u: TestUser) =>
        (await req(u, "GET", "/api/v1/notifications?kind=volume.near_quota")).body.data.filter(
          (n: { data: { volume_id: string } }) => n.data.volume_id === v.id,
        );
      await applyStorageReport(t.deps, "clu_east", report(0));
      expect(await near(w.projectAdminA)).toHaveLength(0);
      await applyStorageReport(t.deps, "clu_east", report(1));
      await applyStorageReport(t.deps, "clu_east", report(1));
      const rung = await near(w.projectAdminA);
      expect(rung).toHaveLength(1);
      expect(rung[0]).toMatchObject({
        title: expect.stringContaining("100 % full"),
        data: { owner_kind: "project", owner_id: w.projectA.id, used_gb: 1, size_gb: 1 },
      });
      // The project has an administrator: its members, the organization's admins and other organizations hear nothing.
      for (const u of [w.memberA, w.adminA, w.memberB]) expect(await near(u)).toHaveLength(0);
    });

    it("does not mount a locked volume, and says why", async () => {
      const v = await aVolume(w.memberA, { size_gb: 1 });
      await req(w.adminA, "POST", `/api/v1/storage/volumes/${v.id}/lock`, { reason: "investigation" });
      // The sessions' catalog caches volumes for a few seconds: ask until it has read the lock.
      let r = await session(w.memberA, [{ volume: v.id }]);
      for (let i = 0; i < 80 && r.body?.error?.code !== "volume_locked"; i++) {
        await new Promise((res) => setTimeout(res, 100));
        r = await session(w.memberA, [{ volume: v.id }]);
      }
      expect(r.status).toBe(409);
      expect(r.body.error).toMatchObject({ code: "volume_locked", details: { reason: "investigation" } });
    });
  });

  it("shares a volume within its organization: the share sees it and mounts it read-only; other organizations cannot be named", async () => {
    const v = await aVolume(w.memberA, { size_gb: 1 });
    const path = `/api/v1/storage/volumes/${v.id}/shares`;
    for (const bad of [
      { kind: "user", id: w.memberB.id },
      { kind: "project", id: w.projectB.id },
      { kind: "user", id: "usr_nobody" },
    ]) {
      const r = await req(w.memberA, "PUT", path, { shares: [bad] });
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body.error.details.issues[0]).toMatchObject({
        path: ["body", "shares", 0, "id"],
        code: "invalid_reference",
      });
    }
    expect((await req(w.memberB, "PUT", path, { shares: [] })).status).toBe(404);
    expect((await req(w.orgMemberA, "PUT", path, { shares: [] })).status).toBe(404);
    expect(
      (await req(w.memberA, "PUT", path, { shares: [{ kind: "user", id: w.orgMemberA.id, access: "nope" }] })).status,
    ).toBe(400);
    const ok = await req(w.memberA, "PUT", path, { shares: [{ kind: "user", id: w.orgMemberA.id }] });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.shares).toEqual([{ kind: "user", id: w.orgMemberA.id, access: "read_only" }]);
    // The audit row keeps the whole list as the API took it: the shares backfill
    // (migration 20261126002200) reads volumes' last successful list from there.
    const audited = await t.database
      .db("audit_log")
      .where({ action: "storage.volume.share", target_kind: "volume", target_id: v.id, outcome: "success" })
      .orderBy("seq", "desc")
      .first();
    expect(audited.diff.after.shares).toEqual([{ kind: "user", id: w.orgMemberA.id, access: "read_only" }]);
    // The share sees it, may not change it, and mounts it read-only only.
    expect((await req(w.orgMemberA, "GET", `/api/v1/storage/volumes/${v.id}`)).status).toBe(200);
    expect((await req(w.orgMemberA, "PATCH", `/api/v1/storage/volumes/${v.id}`, { size_gb: 2 })).status).toBe(403);
    const writable = await req(w.orgMemberA, "POST", "/api/v1/sessions", {
      offering: "h100",
      preset: "gpu-small",
      image: "jupyterlab",
      volumes: [{ volume: v.id, read_only: false }],
    });
    expect(writable.status).toBe(403);
    expect(writable.body.error.details).toMatchObject({ access: "ReadOnly" });
    // Still invisible to another organization.
    expect((await req(w.adminB, "GET", `/api/v1/storage/volumes/${v.id}`)).status).toBe(404);
    // In the share's list, marked as shared with them (and how); the owner's shows no mark.
    const listed = async (u: TestUser) =>
      ((await req(u, "GET", "/api/v1/storage/volumes?size=100")).body.data as { id: string }[]).find(
        (x) => x.id === v.id,
      );
    expect(await listed(w.orgMemberA)).toMatchObject({ id: v.id, shared_with_me: "read_only" });
    expect((await req(w.orgMemberA, "GET", `/api/v1/storage/volumes/${v.id}`)).body.shared_with_me).toBe("read_only");
    expect(await listed(w.memberA)).toMatchObject({ id: v.id, shared_with_me: null });
    for (const u of [w.memberB, w.adminB]) expect(await listed(u)).toBeUndefined();
    // Read-write, then unshared: gone from the share's list.
    await req(w.memberA, "PUT", path, { shares: [{ kind: "user", id: w.orgMemberA.id, access: "read_write" }] });
    expect(await listed(w.orgMemberA)).toMatchObject({ shared_with_me: "read_write" });
    await req(w.memberA, "PUT", path, { shares: [] });
    expect(await listed(w.orgMemberA)).toBeUndefined();
    expect(await t.database.db("volume_shares").where({ volume_id: v.id }).count("* as n")).toEqual([{ n: "0" }]);
  });

  let memberAVolume: () => Promise<string>;
  beforeAll(() => {
    memberAVolume = async () => (await aVolume(w.memberA, { size_gb: 1 })).id;
  });
  const refusedOutside = [
    { as: "adminB" as const, status: 404 as const, why: "another organization's admin" },
    { as: "memberB" as const, status: 404 as const, why: "another organization" },
    { as: "outsider" as const, status: 404 as const, why: "no membership" },
    { as: "orgMemberA" as const, status: 404 as const, why: "same organization, not the owner" },
  ];
  itBehavesPerRole(
    [
      {
        name: "/api/v1/storage/volumes/:id",
        method: "GET",
        path: async () => `/api/v1/storage/volumes/${await memberAVolume()}`,
        allowed: [
          { as: "memberA", status: 200 },
          { as: "adminA", status: 200 },
          { as: "superAdmin", status: 200 },
        ],
        refused: refusedOutside,
      },
      {
        name: "/api/v1/storage/volumes/:id",
        method: "PATCH",
        path: async () => `/api/v1/storage/volumes/${await memberAVolume()}`,
        body: () => ({ size_gb: 2 }),
        allowed: [
          { as: "memberA", status: 200 },
          { as: "adminA", status: 200 },
        ],
        refused: refusedOutside,
        malformed: { size_gb: "2" },
      },
      {
        name: "/api/v1/storage/volumes/:id",
        method: "DELETE",
        path: async () => `/api/v1/storage/volumes/${await memberAVolume()}`,
        allowed: [
          { as: "memberA", status: 200 },
          { as: "adminA", status: 200 },
        ],
        refused: refusedOutside,
      },
      {
        name: "/api/v1/storage/volumes/:id/restore",
        method: "POST",
        path: async () => {
          const id = await memberAVolume();
          await req(w.memberA, "DELETE", `/api/v1/storage/volumes/${id}`);
          return `/api/v1/storage/volumes/${id}/restore`;
        },
        allowed: [
          { as: "memberA", status: 200 },
          { as: "adminA", status: 200 },
        ],
        refused: refusedOutside,
      },
      {
        name: "/api/v1/storage/volumes/:id/lock",
        method: "POST",
        path: async () => `/api/v1/storage/volumes/${await memberAVolume()}/lock`,
        body: () => ({ reason: "audit" }),
        allowed: [{ as: "adminA", status: 200 }],
        refused: [...refusedOutside, { as: "memberA", status: 403, why: "owners do not lock" }],
        malformed: { reason: "" },
      },
      {
        name: "/api/v1/storage/volumes",
        method: "POST",
        path: () => "/api/v1/storage/volumes",
        body: () => ({ name: `n-${Math.random().toString(36).slice(2)}`, size_gb: 1 }),
        allowed: [{ as: "memberA", status: 201 }],
        refused: [],
        malformed: { name: "", size_gb: 0 },
      },
    ],
    () => ({ t, w }),
  );
});

describe("deleting a volume, and undoing it", () => {
  const namespaceA = () => w.orgA.id.replace("_", "-").toLowerCase();
  const crOf = async (id: string) =>
    (await custom().getNamespacedCustomObject({
      ...GROUP,
      plural: "volumes",
      namespace: namespaceA(),
      name: id.replace("_", "-"),
    })) as { metadata: { annotations?: Record<string, string> } };

  it("keeps a deleted volume's data for the grace period, unmountable, listed as deleted, and restores it", async () => {
    const v = await aVolume(w.memberA, { size_gb: 3 });
    await req(w.adminA, "POST", `/api/v1/storage/volumes/${v.id}/lock`, { reason: "keep" });
    await req(w.adminA, "POST", `/api/v1/storage/volumes/${v.id}/unlock`);
    await req(w.memberA, "PUT", `/api/v1/storage/volumes/${v.id}/shares`, {
      shares: [{ kind: "user", id: w.orgMemberA.id }],
    });
    const del = await req(w.memberA, "DELETE", `/api/v1/storage/volumes/${v.id}`);
    expect(del.status, JSON.stringify(del.body)).toBe(200);
    expect(Date.parse(del.body.purge_after) - Date.parse(del.body.deleted_at)).toBe(24 * 3_600_000);
    // The resource stays, marked: the worker releases its claim at once and removes it after the grace period.
    expect((await crOf(v.id)).metadata.annotations?.["berth.dev/purge-after"]).toBe(del.body.purge_after);
    expect((await req(w.memberA, "GET", `/api/v1/storage/volumes/${v.id}`)).status).toBe(404);
    const live = await req(w.memberA, "GET", "/api/v1/storage/volumes?size=100");
    expect(live.body.data.map((x: { id: string }) => x.id)).not.toContain(v.id);
    const deleted = await req(w.memberA, "GET", "/api/v1/storage/volumes?size=100&deleted=true");
    expect(deleted.body.data.map((x: { id: string }) => x.id)).toContain(v.id);
    // Not mountable while deleted.
    let r = await req(w.memberA, "POST", "/api/v1/sessions", {
      offering: "h100",
      preset: "gpu-small",
      image: "jupyterlab",
      volumes: [{ volume: v.id }],
    });
    for (let i = 0; i < 80 && r.status !== 400; i++) {
      await new Promise((res) => setTimeout(res, 100));
      r = await req(w.memberA, "POST", "/api/v1/sessions", {
        offering: "h100",
        preset: "gpu-small",
        image: "jupyterlab",
        volumes: [{ volume: v.id }],
      });
    }
    expect(r.status).toBe(400);
    expect(r.body.error.details.issues[0].message).toMatch(/deleted; restore it/);
    // Undo: back as it was, shares included.
    const back = await req(w.memberA, "POST", `/api/v1/storage/volumes/${v.id}/restore`);
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect(back.body).toMatchObject({ id: v.id, deleted_at: null, purge_after: null, size_gb: 3 });
    expect(back.body.shares).toEqual([{ kind: "user", id: w.orgMemberA.id, access: "read_only" }]);
    expect((await crOf(v.id)).metadata.annotations?.["berth.dev/purge-after"]).toBeUndefined();
    expect((await req(w.memberA, "GET", `/api/v1/storage/volumes/${v.id}`)).status).toBe(200);
    // Restoring what is not deleted: nothing to restore.
    expect((await req(w.memberA, "POST", `/api/v1/storage/volumes/${v.id}/restore`)).status).toBe(404);
  });

  it("refuses to restore once the grace period is over, and when the name was taken meanwhile", async () => {
    const gone = await aVolume(w.memberA, { size_gb: 1 });
    await req(w.memberA, "DELETE", `/api/v1/storage/volumes/${gone.id}`);
    await t.database
      .db("volumes")
      .where({ id: gone.id })
      .update({ purge_after: new Date(t.clock.now().getTime() - 1000) });
    const late = await req(w.memberA, "POST", `/api/v1/storage/volumes/${gone.id}/restore`);
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: "volume_purged", details: { volume: gone.id } });

    const first = await aVolume(w.memberA, { name: "scratch-restore", size_gb: 1 });
    await req(w.memberA, "DELETE", `/api/v1/storage/volumes/${first.id}`);
    await aVolume(w.memberA, { name: "scratch-restore", size_gb: 1 });
    const taken = await req(w.memberA, "POST", `/api/v1/storage/volumes/${first.id}/restore`);
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe("already_exists");
    expect((await t.database.db("volumes").where({ id: first.id }).first("deleted_at")).deleted_at).not.toBeNull();
  });

  it("malformed volume ids are a bad request naming the parameter", async () => {
    const r = await req(w.memberA, "POST", "/api/v1/storage/volumes/not-a-volume/restore");
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("validation_failed");
  });
});

describe("storage settings: rate, fleet-default capacity, grace period", () => {
  it("prices volumes at the rate and gives pools that state nothing the fleet default", async () => {
    const initial = await req(w.memberA, "GET", "/api/v1/storage/settings");
    expect(initial.body).toEqual({ gb_hour_credit_rate: "100", fleet_capacity_gb: null, delete_grace_hours: 24 });
    await req(w.superAdmin, "POST", "/api/v1/storage/pools", {
      name: "bare",
      cluster: "clu_west",
      storage_class: "bare",
      default: false,
    });
    expect((await req(w.superAdmin, "GET", "/api/v1/storage/pools/bare")).body.capacity).toBeNull();
    const set = await req(w.superAdmin, "PUT", "/api/v1/storage/settings", {
      gb_hour_credit_rate: "250",
      fleet_capacity_gb: 40,
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toEqual({ gb_hour_credit_rate: "250", fleet_capacity_gb: 40, delete_grace_hours: 24 });
    const bare = await req(w.superAdmin, "GET", "/api/v1/storage/pools/bare");
    expect(bare.body.capacity).toMatchObject({ source: "manual", via: "fleet_default", total_gb: 40, stale: false });
    // Its own stated figure goes first.
    expect((await req(w.superAdmin, "GET", "/api/v1/storage/pools/small")).body.capacity).toMatchObject({
      source: "manual",
      via: "pool",
      total_gb: 250,
    });
    // The gate reads the fleet default too.
    const big = await req(w.memberA, "POST", "/api/v1/storage/volumes", { name: "big", size_gb: 41, pool: "bare" });
    expect(big.body.error.code).toBe("pool_capacity_exceeded");
    const v = await aVolume(w.memberA, { size_gb: 10, pool: "bare" });
    expect((await req(w.memberA, "GET", `/api/v1/storage/volumes/${v.id}`)).body.hourly_cost).toBe("2500");
    await req(w.superAdmin, "PUT", "/api/v1/storage/settings", { gb_hour_credit_rate: "100", fleet_capacity_gb: null });
  });

  it("refuses bad settings naming the field, and changes nothing", async () => {
    for (const [body, field] of [
      [{ gb_hour_credit_rate: "1.5" }, "body.gb_hour_credit_rate"],
      [{ gb_hour_credit_rate: 100 }, "body.gb_hour_credit_rate"],
      [{ fleet_capacity_gb: 0 }, "body.fleet_capacity_gb"],
      [{ fleet_capacity_gb: 2.5 }, "body.fleet_capacity_gb"],
      [{ delete_grace_hours: -1 }, "body.delete_grace_hours"],
      [{ delete_grace_hours: 100_000 }, "body.delete_grace_hours"],
    ] as const) {
      const r = await req(w.superAdmin, "PUT", "/api/v1/storage/settings", body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.code).toBe("validation_failed");
      expect(r.body.error.details.issues.map((i: { path: string[] }) => i.path.join("."))).toContain(field);
    }
    expect((await req(w.superAdmin, "PUT", "/api/v1/storage/settings", {})).status).toBe(400);
    expect((await req(w.superAdmin, "PUT", "/api/v1/storage/settings", { color: "red" })).status).toBe(400);
    expect((await req(w.memberA, "GET", "/api/v1/storage/settings")).body.gb_hour_credit_rate).toBe("100");
  });

  it("prices a session's volumes in its cost preview, and refuses what it may not mount", async () => {
    const v = await aVolume(w.memberA, { size_gb: 30, pool: "small" });
    const r = await req(w.memberA, "POST", "/api/v1/sessions/preview-cost", {
      offering: "h100",
      preset: "gpu-small",
      duration_seconds: 7200,
      volumes: [v.id],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.storage).toEqual({
      volumes: [{ volume: v.id, size_gb: 30 }],
      size_gb: 30,
      gb_hour_rate: "100",
      hourly_rate: "3000",
      cost: "6000",
    });
    expect(r.body.total_cost).toBe((BigInt(r.body.cost) + 6000n).toString());
    const foreign = await req(w.memberB, "POST", "/api/v1/sessions/preview-cost", {
      offering: "h100",
      volumes: [v.id],
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.details.issues[0]).toMatchObject({ code: "invalid_reference" });
    const none = await req(w.memberA, "POST", "/api/v1/sessions/preview-cost", { offering: "h100" });
    expect(none.body.storage).toMatchObject({ volumes: [], size_gb: 0, cost: "0" });
  });

  itBehavesPerRole(
    [
      {
        name: "/api/v1/storage/settings",
        method: "GET",
        path: () => "/api/v1/storage/settings",
        allowed: [
          { as: "memberA", status: 200 },
          { as: "superAdmin", status: 200 },
        ],
        refused: [],
      },
      {
        name: "/api/v1/storage/settings",
        method: "PUT",
        path: () => "/api/v1/storage/settings",
        body: () => ({ delete_grace_hours: 24 }),
        allowed: [{ as: "superAdmin", status: 200 }],
        refused: [
          { as: "adminA", status: 403, why: "organization admins do not set fleet-wide storage" },
          { as: "memberA", status: 403, why: "members do not" },
        ],
        malformed: { delete_grace_hours: "24" },
      },
    ],
    () => ({ t, w }),
  );
});

describe("a pool read from the driver's volume stats", () => {
  it("reads csi via volume_stats where the driver publishes no capacity objects, and records each change of source", async () => {
    const made = await req(w.superAdmin, "POST", "/api/v1/storage/pools", {
      name: "stats",
      cluster: "clu_west",
      storage_class: "berth-stats",
      default: false,
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const report = (classes: unknown[]) => ({ cluster_id: "clu_west", observed_at: new Date().toISOString(), classes });
    const measuredAt = new Date(Date.now() - 60_000).toISOString();
    await applyStorageReport(
      t.deps,
      "clu_west",
      report([
        {
          storage_class: "berth-stats",
          available_gb: 1500,
          total_gb: 2000,
          via: "volume_stats",
          measured_at: measuredAt,
        },
      ]) as never,
    );
    const read = async () => (await req(w.superAdmin, "GET", "/api/v1/storage/pools/stats")).body.capacity;
    expect(await read()).toMatchObject({
      source: "csi",
      via: "volume_stats",
      total_gb: 2000,
      available_gb: 1500,
      observed_at: measuredAt,
      stale: false,
    });
    // The capacity objects win once the driver publishes them; without either, nothing is known.
    await applyStorageReport(
      t.deps,
      "clu_west",
      report([{ storage_class: "berth-stats", available_gb: 1200, via: "csi_capacity" }]) as never,
    );
    expect(await read()).toMatchObject({ source: "csi", via: "csi_capacity", available_gb: 1200 });
    await applyStorageReport(t.deps, "clu_west", report([]) as never);
    expect(await read()).toBeNull();
    const cr = (await custom().getClusterCustomObject({ ...GROUP, plural: "pools", name: "stats" })) as {
      status: { sourceChanges: { from?: string; to?: string }[] };
    };
    expect(cr.status.sourceChanges.map((c) => [c.from ?? null, c.to ?? null])).toEqual([
      [null, "csi"],
      ["csi", null],
    ]);
    expect((await req(w.superAdmin, "DELETE", "/api/v1/storage/pools/stats")).status).toBe(204);
  });
});
