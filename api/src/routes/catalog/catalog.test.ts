// The catalog against a real kube-apiserver (the test bed's management cluster) with the generated CRDs.

import { HttpKube } from "@berth/controllers/kube";
import { loadCrds } from "@berth/crds/manifests";
import { type Fleet, kubeConfigFrom, startFleet } from "@berth/e2e";
import { ApiextensionsV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CatalogInstallResult,
  defaultCatalog,
  installDefaultCatalog,
  SYSTEM_NAMESPACE,
} from "../../bootstrap/catalog.ts";
import { aGpuCluster } from "../../db/operations/sessions/sessions.test-support.ts";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  itBehavesPerRole,
  type RouteCase,
  startIdentityTestApi,
} from "../../domain/identity/identity.test-support.ts";

let fleet: Fleet;
let kc: KubeConfig;
let kube: HttpKube;
let firstInstall: CatalogInstallResult;
let t: IdentityTestApi;
let w: IdentityWorld;

beforeAll(async () => {
  fleet = await startFleet({ clusters: [{ name: "mgmt", kind: "management" }] });
  kc = kubeConfigFrom(fleet.cluster("mgmt").kubeconfig);
  const ext = kc.makeApiClient(ApiextensionsV1Api);
  for (const crd of loadCrds()) await ext.createCustomResourceDefinition({ body: crd as never });
  // The installer waits for the fresh CRDs to be served.
  kube = new HttpKube(kc);
  firstInstall = await installDefaultCatalog(kube);
  t = await startIdentityTestApi({ kubeConfig: kc });
  w = await anIdentityWorld(t);
});

afterAll(async () => {
  await t?.stop();
  kube?.close();
  await fleet?.stop();
});

const custom = () => kc.makeApiClient(CustomObjectsApi);
const OFFERING = { group: "berth.dev", version: "v1alpha1", plural: "offerings" };

describe("the default catalog at start-up", () => {
  it("creates offerings, images, presets, the global policy and the system wallet", () => {
    expect(firstInstall.existing).toEqual([]);
    expect(firstInstall.created.sort()).toEqual(
      [
        "Offering/h100",
        "Offering/h100-1-2",
        "Offering/h100-1-4",
        "Offering/h100-1-8",
        "Offering/h100-1-16",
        "Offering/h100-1-32",
        "Offering/h100-mig-1g-10gb",
        "Offering/h100-mig-1g-20gb",
        "Offering/h100-mig-2g-20gb",
        "Offering/h100-mig-3g-40gb",
        "Offering/h100-mig-4g-40gb",
        "Offering/a100",
        "Offering/a100-1-2",
        "Offering/a100-1-4",
        "Offering/a100-1-8",
        "Offering/a100-1-16",
        "Offering/a100-1-32",
        "Offering/a100-mig-1g-10gb",
        "Offering/a100-mig-1g-20gb",
        "Offering/a100-mig-2g-20gb",
        "Offering/a100-mig-3g-40gb",
        "Offering/a100-mig-4g-40gb",
        "Offering/l4",
        "Image/jupyterlab",
        "Image/code-server",
        "Image/terminal",
        "ResourcePreset/cpu-small",
        "ResourcePreset/cpu-medium",
        "ResourcePreset/cpu-large",
        "ResourcePreset/gpu-small",
        "ResourcePreset/gpu-medium",
        "ResourcePreset/gpu-large",
        "ResourcePolicy/global",
        `Wallet/${SYSTEM_NAMESPACE}/system`,
      ].sort(),
    );
  });

  it("stores the system wallet in berth-system, owned by the system", async () => {
    const wallet = (await custom().getNamespacedCustomObject({
      group: "berth.dev",
      version: "v1alpha1",
      plural: "wallets",
      namespace: SYSTEM_NAMESPACE,
      name: "system",
    })) as {
      spec: { owner: { kind: string } };
    };
    expect(wallet.spec.owner.kind).toBe("system");
  });

  it("creates nothing on a second start", async () => {
    const again = await installDefaultCatalog(kube);
    expect(again.created).toEqual([]);
    expect(again.existing).toHaveLength(defaultCatalog().length);
  });

  it("keeps an administrator's edit across a restart, and brings back a deleted default", async () => {
    const edit = await t.request("PATCH", "/api/v1/offerings/l4", {
      token: w.superAdmin.token,
      json: { hourly_credit_rate: "1234567", tier: "budget" },
    });
    expect(edit.status).toBe(200);
    await custom().deleteClusterCustomObject({ ...OFFERING, name: "a100" });

    const restart = await installDefaultCatalog(kube);
    expect(restart.created).toEqual(["Offering/a100"]);
    const l4 = await t.request("GET", "/api/v1/offerings/l4", { token: w.memberA.token });
    expect(l4.body).toMatchObject({ hourly_credit_rate: "1234567", tier: "budget" });
  });
});

describe("/api/v1/offerings", () => {
  it("lists the offerings with integer minor-unit rates as strings", async () => {
    const r = await t.request("GET", "/api/v1/offerings?size=20&page=1", { token: w.memberA.token });
    const all = await t.request("GET", "/api/v1/offerings?size=100", { token: w.memberA.token });
    expect(r.status).toBe(200);
    const h100 = all.body.data.find((o: { name: string }) => o.name === "h100");
    expect(h100).toEqual({
      name: "h100",
      display_name: "NVIDIA H100 80 GB",
      gpu_model: "NVIDIA-H100-80GB-HBM3",
      tier: "premium",
      gpu_count: 1,
      fraction: "1",
      gpu_memory_mib: 81559,
      mig_profile: null,
      card_share: "1",
      slice_memory_mib: null,
      slice_cores: null,
      hourly_credit_rate: "4000000",
      borrowed_rate_multiplier: 1,
      description: expect.any(String),
      enabled: true,
      created_at: expect.any(String),
    });
    expect(r.body.pagination).toMatchObject({ page: 1, size: 20 });
  });

  it("lists the MIG instances with their profile and share of the card, at that share of the card's rate", async () => {
    const r = await t.request("GET", "/api/v1/offerings?size=100", { token: w.memberA.token });
    const o = (name: string) => r.body.data.find((x: { name: string }) => x.name === name);
    expect(o("h100-mig-3g-40gb")).toMatchObject({
      mig_profile: "3g.40gb",
      card_share: "1/2",
      hourly_credit_rate: "2000000",
    });
    expect(o("h100-mig-1g-10gb")).toMatchObject({ card_share: "1/7", hourly_credit_rate: "571428" });
    expect(o("a100-mig-4g-40gb")).toMatchObject({ card_share: "4/7", hourly_credit_rate: "1428571" });
  });

  it("lists the fractional tiers with the memory and cores a slice guarantees and their own rates", async () => {
    const r = await t.request("GET", "/api/v1/offerings?size=100", { token: w.memberA.token });
    const h100 = (name: string) => r.body.data.find((o: { name: string }) => o.name === name);
    expect(h100("h100-1-8")).toMatchObject({
      gpu_model: "NVIDIA-H100-80GB-HBM3",
      tier: "shared",
      gpu_count: 1,
      fraction: "1/8",
      gpu_memory_mib: 81559,
      slice_memory_mib: 10194,
      slice_cores: 12,
      hourly_credit_rate: "600000",
    });
    expect(h100("h100-1-2")).toMatchObject({ fraction: "1/2", slice_memory_mib: 40779, slice_cores: 50 });
    expect(h100("a100-1-4")).toMatchObject({ fraction: "1/4", slice_memory_mib: 20480, hourly_credit_rate: "750000" });
    // The finer tiers: 32 thirty-seconds pay what eight eighths do.
    expect(h100("h100-1-16")).toMatchObject({ fraction: "1/16", slice_memory_mib: 5097, slice_cores: 6 });
    expect(h100("h100-1-32")).toMatchObject({
      fraction: "1/32",
      slice_memory_mib: 2548,
      slice_cores: 3,
      hourly_credit_rate: "150000",
    });
    expect(h100("a100-1-32")).toMatchObject({ fraction: "1/32", slice_memory_mib: 2560, hourly_credit_rate: "100000" });
  });

  it("reads a null gpu_memory_mib on create as not stated, as PATCH does (found by the fuzzer)", async () => {
    const r = await t.request("POST", "/api/v1/offerings", {
      token: w.superAdmin.token,
      json: {
        name: "l4-null-memory",
        display_name: "L4",
        gpu_model: "NVIDIA-L4",
        tier: "shared",
        gpu_memory_mib: null,
        hourly_credit_rate: "50000",
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.gpu_memory_mib).toBeNull();
    const sliced = await t.request("POST", "/api/v1/offerings", {
      token: w.superAdmin.token,
      json: {
        name: "l4-null-half",
        display_name: "L4",
        gpu_model: "NVIDIA-L4",
        tier: "shared",
        fraction: "1/2",
        gpu_memory_mib: null,
        hourly_credit_rate: "50000",
      },
    });
    expect(sliced.status).toBe(400);
  });

  it("takes 1/16 and 1/32 where a slice keeps 1 GiB, and names the finest that fits where it does not", async () => {
    const admin = { token: w.superAdmin.token };
    const offering = (name: string, fraction: string, gpu_memory_mib: number) => ({
      name,
      display_name: name,
      gpu_model: "NVIDIA-L4",
      tier: "shared",
      fraction,
      gpu_memory_mib,
      hourly_credit_rate: "50000",
    });
    const sixteenth = await t.request("POST", "/api/v1/offerings", {
      ...admin,
      json: offering("l4-1-16", "1/16", 23034),
    });
    expect(sixteenth.status, JSON.stringify(sixteenth.body)).toBe(201);
    expect(sixteenth.body).toMatchObject({ fraction: "1/16", slice_memory_mib: 1439, slice_cores: 6 });
    const tooFine = await t.request("POST", "/api/v1/offerings", {
      ...admin,
      json: offering("l4-1-32", "1/32", 23034),
    });
    expect(tooFine.status).toBe(400);
    expect(tooFine.body.error).toMatchObject({
      code: "gpu_slice_too_small",
      details: { fraction: "1/32", slice_memory_mib: 719, minimum_mib: 1024, largest_fraction: "1/16" },
    });
    expect(tooFine.body.error.message).toContain("the finest slice that fits is 1/16");
    expect((await t.request("GET", "/api/v1/offerings/l4-1-32", admin)).status).toBe(404);
    // Changing an existing tier to a slice its card cannot keep is refused the same way, and changes nothing.
    const patched = await t.request("PATCH", "/api/v1/offerings/l4-1-16", { ...admin, json: { fraction: "1/32" } });
    expect(patched.status).toBe(400);
    expect(patched.body.error.details.largest_fraction).toBe("1/16");
    for (const fraction of ["1/64", "1/032", "1/12"]) {
      const r = await t.request("POST", "/api/v1/offerings", { ...admin, json: offering("l4-x", fraction, 23034) });
      expect(r.status, fraction).toBe(400);
      expect(r.body.error).toMatchObject({
        code: "gpu_fraction_not_offered",
        details: { allowed: ["1", "1/2", "1/4", "1/8", "1/16", "1/32"] },
      });
    }
    expect((await t.request("GET", "/api/v1/offerings/l4-1-16", admin)).body.fraction).toBe("1/16");
  });

  it("creates and changes a fractional offering, and refuses fractions not offered and slices under 1 GiB", async () => {
    const admin = { token: w.superAdmin.token };
    const created = await t.request("POST", "/api/v1/offerings", {
      ...admin,
      json: {
        name: "l40s-1-4",
        display_name: "L40S 1/4",
        gpu_model: "NVIDIA-L40S",
        tier: "shared",
        fraction: "1/4",
        gpu_memory_mib: 46068,
        hourly_credit_rate: "300000",
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ fraction: "1/4", slice_memory_mib: 11517, slice_cores: 25 });
    const whole = await t.request("PATCH", "/api/v1/offerings/l40s-1-4", { ...admin, json: { fraction: "1" } });
    expect(whole.body).toMatchObject({ fraction: "1", slice_memory_mib: null });
    const bad = await t.request("PATCH", "/api/v1/offerings/l40s-1-4", { ...admin, json: { fraction: "3/4" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("gpu_fraction_not_offered");
    const small = await t.request("POST", "/api/v1/offerings", {
      ...admin,
      json: {
        name: "t4-1-8",
        display_name: "T4 1/8",
        gpu_model: "T4",
        tier: "shared",
        fraction: "1/8",
        gpu_memory_mib: 4096,
        hourly_credit_rate: "1",
      },
    });
    expect(small.status).toBe(400);
    expect(small.body.error).toMatchObject({ code: "gpu_slice_too_small", details: { largest_fraction: "1/4" } });
    const several = await t.request("PATCH", "/api/v1/offerings/l40s-1-4", {
      ...admin,
      json: { fraction: "1/2", gpu_count: 2 },
    });
    expect(several.status).toBe(400);
    expect(several.body.error.code).toBe("validation_failed");
    // Nothing half-written: the refused changes left the offering as it was.
    const now = await t.request("GET", "/api/v1/offerings/l40s-1-4", admin);
    expect(now.body).toMatchObject({ fraction: "1", gpu_count: 1 });
    // A member may not create one.
    const member = await t.request("POST", "/api/v1/offerings", {
      token: w.memberA.token,
      json: {
        name: "x-1-2",
        display_name: "x",
        gpu_model: "X",
        tier: "t",
        fraction: "1/2",
        gpu_memory_mib: 8192,
        hourly_credit_rate: "1",
      },
    });
    expect(member.status).toBe(403);
  });

  it("hides a disabled offering from everyone but super_admins", async () => {
    await t.request("POST", "/api/v1/offerings", {
      token: w.superAdmin.token,
      json: { name: "retired", display_name: "Retired", gpu_model: "X", tier: "t", hourly_credit_rate: "1" },
    });
    expect(
      (await t.request("PATCH", "/api/v1/offerings/retired", { token: w.superAdmin.token, json: { enabled: false } }))
        .status,
    ).toBe(200);
    const names = async (token: string) =>
      (await t.request("GET", "/api/v1/offerings?size=100", { token })).body.data.map((o: { name: string }) => o.name);
    expect(await names(w.memberA.token)).not.toContain("retired");
    expect(await names(w.superAdmin.token)).toContain("retired");
    expect((await t.request("GET", "/api/v1/offerings/retired", { token: w.memberA.token })).status).toBe(404);
  });

  it("refuses a fractional or negative rate, naming the field", async () => {
    for (const rate of ["1.5", "-3", "1e6"]) {
      const r = await t.request("POST", "/api/v1/offerings", {
        token: w.superAdmin.token,
        json: { name: "bad", display_name: "Bad", gpu_model: "X", tier: "t", hourly_credit_rate: rate },
      });
      expect(r.status).toBe(400);
      expect(r.body.error.details.issues[0].path).toEqual(["body", "hourly_credit_rate"]);
    }
  });

  // Found by fuzzing: offerings were made with GPU models "À񩊃" and '7"?', which no node label can carry.
  it("refuses a GPU model that is not a label value, and creates nothing", async () => {
    for (const gpu_model of ["À񩊃", '7"?', "-H100", "a".repeat(64), "NVIDIA H100"]) {
      const r = await t.request("POST", "/api/v1/offerings", {
        token: w.superAdmin.token,
        json: { name: "badmodel", display_name: "Bad", gpu_model, tier: "t", hourly_credit_rate: "1" },
      });
      expect(r.status, gpu_model).toBe(400);
      expect(r.body.error.details.issues[0].path).toEqual(["body", "gpu_model"]);
    }
    const edit = await t.request("PATCH", "/api/v1/offerings/h100", {
      token: w.superAdmin.token,
      json: { gpu_model: '7"?' },
    });
    expect(edit.status).toBe(400);
    expect((await t.request("GET", "/api/v1/offerings/badmodel", { token: w.superAdmin.token })).status).toBe(404);
    const h100 = await t.request("GET", "/api/v1/offerings/h100", { token: w.superAdmin.token });
    expect(h100.body.gpu_model).toBe("NVIDIA-H100-80GB-HBM3");
  });

  it("refuses a second offering of the same name with 409 already_exists", async () => {
    const r = await t.request("POST", "/api/v1/offerings", {
      token: w.superAdmin.token,
      json: { name: "h100", display_name: "Again", gpu_model: "X", tier: "t", hourly_credit_rate: "1" },
    });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("already_exists");
  });
});

describe("/api/v1/images", () => {
  it("shows a private image to its owner only", async () => {
    const made = await t.request("POST", "/api/v1/images", {
      token: w.superAdmin.token,
      json: {
        name: "mine",
        display_name: "Mine",
        image: "registry.example/mine:1",
        kind: "jupyterlab",
        visibility: "private",
        owner: w.memberA.id,
      },
    });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ visibility: "private", owner: w.memberA.id });
    const names = async (token: string) =>
      (await t.request("GET", "/api/v1/images?size=100", { token })).body.data.map((o: { name: string }) => o.name);
    expect(await names(w.memberA.token)).toEqual(
      expect.arrayContaining(["mine", "jupyterlab", "code-server", "terminal"]),
    );
    expect(await names(w.memberB.token)).not.toContain("mine");
    expect((await t.request("GET", "/api/v1/images/mine", { token: w.memberB.token })).status).toBe(404);
    expect((await t.request("GET", "/api/v1/images/mine", { token: w.memberA.token })).status).toBe(200);
  });

  it("refuses a private image without an owner (the kind's cross-field rule)", async () => {
    const r = await t.request("POST", "/api/v1/images", {
      token: w.superAdmin.token,
      json: { name: "orphan", display_name: "Orphan", image: "x:1", kind: "terminal", visibility: "private" },
    });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("validation_failed");
  });

  // Found by fuzzing: a private image was made with owner "􃧿º񚂆Í񚵼n".
  it("refuses an owner that is not an enabled account, and an image reference registries cannot parse", async () => {
    const gone = await t.aUser({ disabled: true });
    const base = { display_name: "Owned", image: "registry.example/owned:1", kind: "terminal", visibility: "private" };
    for (const owner of ["􃧿º񚂆Í񚵼n", "usr_nosuchaccount000000", gone.id]) {
      const r = await t.request("POST", "/api/v1/images", {
        token: w.superAdmin.token,
        json: { ...base, name: "owned", owner },
      });
      expect(r.status, owner).toBe(400);
      expect(r.body.error.details.issues[0].path).toEqual(["body", "owner"]);
    }
    for (const image of ["Registry.Example/UPPER:1", "a b", "x:tag with space", "/leading"]) {
      const r = await t.request("POST", "/api/v1/images", {
        token: w.superAdmin.token,
        json: { ...base, name: "owned", image, owner: w.memberA.id },
      });
      expect(r.status, image).toBe(400);
      expect(r.body.error.details.issues[0].path).toEqual(["body", "image"]);
    }
    const edit = await t.request("PATCH", "/api/v1/images/mine", {
      token: w.superAdmin.token,
      json: { owner: "usr_nosuchaccount000000" },
    });
    expect(edit.status).toBe(400);
    expect((await t.request("GET", "/api/v1/images/owned", { token: w.superAdmin.token })).status).toBe(404);
    expect((await t.request("GET", "/api/v1/images/mine", { token: w.superAdmin.token })).body.owner).toBe(
      w.memberA.id,
    );
  });

  it("filters by kind", async () => {
    const r = await t.request("GET", "/api/v1/images?kind=terminal", { token: w.memberA.token });
    expect(r.body.data.map((o: { name: string }) => o.name)).toEqual(["terminal"]);
  });
});

describe("/api/v1/resource-presets", () => {
  it("lists compute and GPU presets, filtered by kind", async () => {
    const r = await t.request("GET", "/api/v1/resource-presets?kind=gpu", { token: w.memberA.token });
    expect(r.body.data.map((p: { name: string }) => p.name).sort()).toEqual(["gpu-large", "gpu-medium", "gpu-small"]);
    expect(r.body.data.find((p: { name: string }) => p.name === "gpu-small")).toMatchObject({
      kind: "gpu",
      cpu: "8",
      memory: "64Gi",
      gpu_count: 1,
    });
  });

  it("refuses a GPU preset without GPUs", async () => {
    const r = await t.request("POST", "/api/v1/resource-presets", {
      token: w.superAdmin.token,
      json: { name: "gpu-none", display_name: "None", kind: "gpu", cpu: "1", memory: "1Gi", gpu_count: 0 },
    });
    expect(r.status).toBe(400);
  });
});

describe("/api/v1/resource-policies", () => {
  it("shows the global policy to everyone and an organization's policy to its people only", async () => {
    const made = await t.request("POST", "/api/v1/resource-policies", {
      token: w.superAdmin.token,
      json: {
        name: "org-a",
        scope: { kind: "organization", id: w.orgA.id },
        limits: { max_gpus_per_user: 8 },
        allowed_offerings: ["h100"],
      },
    });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({
      name: "org-a",
      scope: { kind: "organization", id: w.orgA.id, organization: null },
      limits: { max_gpus_per_user: 8 },
      idle: {},
      fair_share: {},
      allowed_offerings: ["h100"],
      created_at: expect.any(String),
    });
    const names = async (token: string) =>
      (await t.request("GET", "/api/v1/resource-policies", { token })).body.data.map((p: { name: string }) => p.name);
    expect((await names(w.memberA.token)).sort()).toEqual(["global", "org-a"]);
    expect(await names(w.memberB.token)).toEqual(["global"]);
    expect((await t.request("GET", "/api/v1/resource-policies/org-a", { token: w.memberB.token })).status).toBe(404);
    const global = await t.request("GET", "/api/v1/resource-policies/global", { token: w.outsider.token });
    expect(global.body.limits).toMatchObject({ max_gpus_per_user: 4 });
  });

  it("shows a project's policy to the project's people and its organization's admins", async () => {
    await t.request("POST", "/api/v1/resource-policies", {
      token: w.superAdmin.token,
      json: { name: "project-a", scope: { kind: "project", id: w.projectA.id }, limits: { max_gpus_per_project: 16 } },
    });
    for (const who of [w.memberA, w.projectAdminA, w.adminA])
      expect((await t.request("GET", "/api/v1/resource-policies/project-a", { token: who.token })).status).toBe(200);
    for (const who of [w.orgMemberA, w.adminB])
      expect((await t.request("GET", "/api/v1/resource-policies/project-a", { token: who.token })).status).toBe(404);
  });

  it("keeps a policy's idle settings, refuses a timeout outside their own bounds, and leaves the limits as sent", async () => {
    const made = await t.request("POST", "/api/v1/resource-policies", {
      token: w.superAdmin.token,
      json: { name: "idle-a", scope: { kind: "organization", id: w.orgA.id }, limits: { max_gpus_per_user: 2 } },
    });
    expect(made.status).toBe(201);
    expect(made.body.idle).toEqual({});
    const outside = await t.request("PATCH", "/api/v1/resource-policies/idle-a", {
      token: w.superAdmin.token,
      json: { idle: { timeout_minutes: 25, min_timeout_minutes: 30 } },
    });
    expect(outside.status).toBe(400);
    expect(outside.body.error.code).toBe("validation_failed");
    const ok = await t.request("PATCH", "/api/v1/resource-policies/idle-a", {
      token: w.superAdmin.token,
      json: {
        idle: { timeout_minutes: 45, min_timeout_minutes: 30, keep_running_max: 1 },
        limits: { max_gpus_per_user: 2, max_session_hours: 12 },
      },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.idle).toEqual({ timeout_minutes: 45, min_timeout_minutes: 30, keep_running_max: 1 });
    expect(ok.body.limits).toEqual({ max_gpus_per_user: 2, max_session_hours: 12 });
    const member = await t.request("PATCH", "/api/v1/resource-policies/idle-a", {
      token: w.memberA.token,
      json: { idle: { timeout_minutes: 0 } },
    });
    expect([403, 404]).toContain(member.status);
  });

  it("refuses a global policy with an id", async () => {
    const r = await t.request("POST", "/api/v1/resource-policies", {
      token: w.superAdmin.token,
      json: { name: "odd", scope: { kind: "global", id: "x" } },
    });
    expect(r.status).toBe(400);
  });
});

describe("fair-share fields of resource policies and offerings (docs/dev/fair-share.md)", () => {
  const H100 = "NVIDIA-H100-80GB-HBM3";
  const post = (json: Record<string, unknown>) =>
    t.request("POST", "/api/v1/resource-policies", { token: w.superAdmin.token, json });

  beforeAll(async () => {
    // The fleet the guarantees are checked against: 8 H100 on one cluster.
    await aGpuCluster(t.database.db, "clu_fairfleet", 8);
  });

  it("keeps an organization's guarantee, limits, weight, grace, minimum runtime and half-life as sent", async () => {
    const fair = {
      guarantees: [{ gpu_model: H100, guaranteed_gpus: 1, borrowing_limit_gpus: 2, lending_limit_gpus: 0.5 }],
      weight: 2,
      reclaim_grace_seconds: 0,
      min_runtime_seconds: 300,
      usage_half_life_hours: 24,
    };
    const made = await post({ name: "fair-a", scope: { kind: "organization", id: w.orgA.id }, fair_share: fair });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.fair_share).toEqual(fair);
    const read = await t.request("GET", "/api/v1/resource-policies/fair-a", { token: w.adminA.token });
    expect(read.body.fair_share).toEqual(fair);
    const cleared = await t.request("PATCH", "/api/v1/resource-policies/fair-a", {
      token: w.superAdmin.token,
      json: { fair_share: { weight: 3 } },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body.fair_share).toEqual({ weight: 3 });
  });

  it("refuses out-of-range and contradictory settings with 400 validation_failed naming the field, creating nothing", async () => {
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [
        { guarantees: [{ gpu_model: H100, guaranteed_gpus: 1, lending_limit_gpus: 2 }] },
        ["guarantees", 0, "lending_limit_gpus"],
      ],
      [
        { guarantees: [{ gpu_model: H100, guaranteed_gpus: 1, borrowing_limit_gpus: -1 }] },
        ["guarantees", 0, "borrowing_limit_gpus"],
      ],
      [{ guarantees: [{ gpu_model: H100, guaranteed_gpus: -2 }] }, ["guarantees", 0, "guaranteed_gpus"]],
      [
        {
          guarantees: [
            { gpu_model: H100, guaranteed_gpus: 1 },
            { gpu_model: H100, guaranteed_gpus: 2 },
          ],
        },
        ["guarantees"],
      ],
      [{ weight: 0 }, ["weight"]],
      [{ reclaim_grace_seconds: -1 }, ["reclaim_grace_seconds"]],
      [{ reclaim_grace_seconds: 86_401 }, ["reclaim_grace_seconds"]],
      [{ min_runtime_seconds: 1.5 }, ["min_runtime_seconds"]],
      [{ usage_half_life_hours: 0 }, ["usage_half_life_hours"]],
    ];
    for (const [fair, field] of cases) {
      const r = await post({
        name: `fair-bad-${n++}`,
        scope: { kind: "organization", id: w.orgB.id },
        fair_share: fair,
      });
      expect(r.status, JSON.stringify(fair)).toBe(400);
      expect(r.body.error.code).toBe("validation_failed");
      expect(r.body.error.details.issues, JSON.stringify(fair)).toContainEqual(
        expect.objectContaining({ path: ["body", "fair_share", ...field] }),
      );
    }
    const list = await t.request("GET", "/api/v1/resource-policies", { token: w.superAdmin.token });
    expect(list.body.data.map((p: { name: string }) => p.name).filter((x: string) => x.startsWith("fair-bad"))).toEqual(
      [],
    );
  });

  it("refuses guarantees the fleet cannot honour with the arithmetic, and a project's above its organization's", async () => {
    const b = await post({
      name: "fair-b",
      scope: { kind: "organization", id: w.orgB.id },
      fair_share: { guarantees: [{ gpu_model: H100, guaranteed_gpus: 6 }] },
    });
    expect(b.status, JSON.stringify(b.body)).toBe(201);
    // A's 1 + B's 6 fit in 8; A asking for 3 would make 9.
    const tooMuch = await t.request("PATCH", "/api/v1/resource-policies/fair-a", {
      token: w.superAdmin.token,
      json: { fair_share: { guarantees: [{ gpu_model: H100, guaranteed_gpus: 3 }] } },
    });
    expect(tooMuch.status).toBe(422);
    expect(tooMuch.body.error.code).toBe("guarantee_unsatisfiable");
    expect(tooMuch.body.error.message).toContain(`${H100}: `);
    expect(tooMuch.body.error.message).toContain("= 9 guaranteed > 8 in the fleet");
    expect(tooMuch.body.error.details.models).toEqual([{ gpu_model: H100, guaranteed: 9, capacity: 8 }]);
    const unchanged = await t.request("GET", "/api/v1/resource-policies/fair-a", { token: w.superAdmin.token });
    expect(unchanged.body.fair_share).toEqual({ weight: 3 });
    const fits = await t.request("PATCH", "/api/v1/resource-policies/fair-a", {
      token: w.superAdmin.token,
      json: { fair_share: { guarantees: [{ gpu_model: H100, guaranteed_gpus: 2 }] } },
    });
    expect(fits.status, JSON.stringify(fits.body)).toBe(200);

    const project = await post({
      name: "fair-project-a",
      scope: { kind: "project", id: w.projectA.id },
      fair_share: { guarantees: [{ gpu_model: H100, guaranteed_gpus: 3 }] },
    });
    expect(project.status).toBe(400);
    expect(project.body.error.details.issues).toContainEqual(
      expect.objectContaining({
        path: ["body", "fair_share", "guarantees"],
        message: expect.stringContaining("above the organization's 2"),
      }),
    );
    const global = await post({
      name: "fair-global",
      scope: { kind: "global" },
      fair_share: { guarantees: [{ gpu_model: H100, guaranteed_gpus: 1 }] },
    });
    expect(global.status).toBe(400);
  });

  it("lets only super_admins write fair-share settings", async () => {
    const r = await t.request("PATCH", "/api/v1/resource-policies/fair-b", {
      token: w.adminB.token,
      json: { fair_share: { guarantees: [{ gpu_model: H100, guaranteed_gpus: 8 }] } },
    });
    expect([403, 404]).toContain(r.status);
    const read = await t.request("GET", "/api/v1/resource-policies/fair-b", { token: w.superAdmin.token });
    expect(read.body.fair_share.guarantees).toEqual([{ gpu_model: H100, guaranteed_gpus: 6 }]);
  });

  it("prices borrowed capacity of an offering at its multiplier, and refuses one above 1 or below a thousandth", async () => {
    const made = await t.request("POST", "/api/v1/offerings", {
      token: w.superAdmin.token,
      json: {
        name: "h100-spot",
        display_name: "H100",
        gpu_model: H100,
        tier: "premium",
        hourly_credit_rate: "4000000",
        borrowed_rate_multiplier: 0.3,
      },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.borrowed_rate_multiplier).toBe(0.3);
    const full = await t.request("PATCH", "/api/v1/offerings/h100-spot", {
      token: w.superAdmin.token,
      json: { borrowed_rate_multiplier: 1 },
    });
    expect(full.body.borrowed_rate_multiplier).toBe(1);
    for (const m of [1.5, 0, 0.0001, 0.12345]) {
      const r = await t.request("PATCH", "/api/v1/offerings/h100-spot", {
        token: w.superAdmin.token,
        json: { borrowed_rate_multiplier: m },
      });
      expect(r.status, String(m)).toBe(400);
      expect(r.body.error.details.issues).toContainEqual(
        expect.objectContaining({ path: ["body", "borrowed_rate_multiplier"] }),
      );
    }
  });
});

let n = 0;
const cases: RouteCase[] = [
  ...(
    [
      [
        "offerings",
        "l4",
        { name: () => `o-${n++}`, display_name: "New", gpu_model: "X", tier: "t", hourly_credit_rate: "5" },
        { tier: "t2" },
        { hourly_credit_rate: 5 },
      ],
      [
        "resource-presets",
        "cpu-small",
        { name: () => `p-${n++}`, display_name: "New", kind: "compute", cpu: "1", memory: "1Gi" },
        { display_name: "Small" },
        { cpu: "lots" },
      ],
      [
        "images",
        "terminal",
        { name: () => `i-${n++}`, display_name: "New", image: "x:1", kind: "terminal" },
        { description: "A shell" },
        { kind: "vm" },
      ],
      [
        "resource-policies",
        "global",
        { name: () => `r-${n++}`, scope: { kind: "global" } },
        { limits: { max_gpus_per_user: 4 } },
        { limits: { max_gpus_per_user: -1 } },
      ],
    ] as const
  ).flatMap(([plural, existing, create, patch, malformed]): RouteCase[] => [
    {
      name: `/${plural} (list)`,
      method: "GET",
      path: () => `/api/v1/${plural}`,
      allowed: [
        { as: "memberA", status: 200 },
        { as: "outsider", status: 200 },
      ],
      refused: [],
    },
    {
      name: `/${plural}/:name (detail)`,
      method: "GET",
      path: () => `/api/v1/${plural}/${existing}`,
      allowed: [
        { as: "memberB", status: 200 },
        { as: "superAdmin", status: 200 },
      ],
      refused: [],
    },
    {
      name: `/${plural} (create)`,
      method: "POST",
      path: () => `/api/v1/${plural}`,
      body: () => Object.fromEntries(Object.entries(create).map(([k, v]) => [k, typeof v === "function" ? v() : v])),
      allowed: [{ as: "superAdmin", status: 201 }],
      refused: [
        { as: "adminA", status: 403, why: "an organization admin does not edit the catalog" },
        { as: "memberA", status: 403, why: "a member does not edit the catalog" },
      ],
      malformed: { name: "Not A Name!" },
    },
    {
      name: `/${plural}/:name (update)`,
      method: "PATCH",
      path: () => `/api/v1/${plural}/${existing}`,
      body: () => patch,
      allowed: [{ as: "superAdmin", status: 200 }],
      refused: [
        { as: "adminA", status: 403, why: "an organization admin does not edit the catalog" },
        { as: "memberB", status: 403, why: "a member does not edit the catalog" },
      ],
      malformed,
    },
  ]),
];

describe("every catalog route, per role", () => {
  itBehavesPerRole(cases, () => ({ t, w }));

  it("answers 404 for a name that does not exist", async () => {
    for (const plural of ["offerings", "resource-presets", "images", "resource-policies"]) {
      const r = await t.request("GET", `/api/v1/${plural}/no-such-thing`, { token: w.superAdmin.token });
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe("not_found");
    }
  });
});

describe("without a management cluster", () => {
  it("answers 503 unavailable", async () => {
    const bare = await startIdentityTestApi();
    try {
      const u = await bare.aUser();
      const r = await bare.request("GET", "/api/v1/offerings", { token: u.token });
      expect(r.status).toBe(503);
      expect(r.body.error.code).toBe("unavailable");
    } finally {
      await bare.stop();
    }
  });
});
