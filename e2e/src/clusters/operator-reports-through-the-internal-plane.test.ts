// An operator reports its cluster's inventory, session status and usage through the internal plane with
// the RS256 token it got at registration. The plane is closed until configuration opens it for source
// ranges; it accepts only current, unexpired operator tokens, and only reports about the token's own
// cluster. Inventory lands in Postgres and shows through the public API.
import type { KeyObject } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApi } from "@berth/api";
import {
  type InternalListener,
  loadOrCreateSigningKey,
  SIGNING_KEY_SECRET,
  startInternalListener,
  testConfig,
} from "@berth/api/testing";
import { HttpKube } from "@berth/controllers/kube";
import { CoreV1Api } from "@kubernetes/client-node";
import { createLocalJWKSet, generateKeyPair, jwtVerify, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bedApi } from "../api-client.ts";
import { kubeConfigFrom } from "../index.ts";
import { type ClustersBed, closedPort, startClustersBed } from "./harness.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";
const L4 = "NVIDIA-L4";

let bed: ClustersBed;
let plane: InternalListener;
const clusters: Record<"a" | "b", { id: string; token: string }> = {
  a: { id: "", token: "" },
  b: { id: "", token: "" },
};

beforeAll(async () => {
  bed = await startClustersBed({
    clusters: [
      { name: "mgmt", kind: "management" },
      {
        name: "gpu-a",
        kind: "gpu",
        nodes: [{ name: "gpu-a-1", gpuModel: H100, gpuCount: 8 }],
        gpuRuntimeClass: true,
        gpuDevicePlugin: true,
      },
      {
        name: "gpu-b",
        kind: "gpu",
        nodes: [{ name: "gpu-b-1", gpuModel: L4, gpuCount: 4 }],
        gpuRuntimeClass: true,
        gpuDevicePlugin: true,
      },
    ],
  });
  for (const [key, name] of [
    ["a", "gpu-a"],
    ["b", "gpu-b"],
  ] as const) {
    const res = await bedApi(bed, bed.superAdmin).call("registerCluster", {
      body: { name, session_domain: `${name}.sessions.localhost`, credential: await bed.credentialFor(name) },
    });
    clusters[key] = { id: res.cluster.id, token: res.operator_token.token };
  }
  const opened = await startInternalListener(bed.t.deps, { allowCidrs: ["127.0.0.0/8"], host: "127.0.0.1", port: 0 });
  if (!opened) throw new Error("the internal plane did not open");
  plane = opened;
});

afterAll(async () => {
  await plane?.close();
  await bed?.stop();
});

// The internal plane's routes (/internal, /.well-known) have no operation id in api/openapi.json: raw calls.
async function call(base: string, method: string, path: string, opts: { token?: string; json?: unknown } = {}) {
  const res = await fetch(base + path, {
    method,
    headers: {
      ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
      ...(opts.json !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(opts.json !== undefined ? { body: JSON.stringify(opts.json) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
const internal = (method: string, path: string, opts: { token?: string; json?: unknown } = {}) =>
  call(plane.url, method, path, opts);

const aNode = (name: string, model: string, gpus: number, extra: Record<string, unknown> = {}) => ({
  name,
  gpu_model: model,
  gpu_count: gpus,
  gpu_allocatable: gpus,
  gpu_in_use: 0,
  labels: { "nvidia.com/gpu.product": model },
  schedulable: true,
  ready: true,
  devices: Array.from({ length: gpus }, (_, index) => ({
    index,
    model,
    uuid: `GPU-${name}-${index}`,
    memory_mib: 81_559,
  })),
  ...extra,
});
const inventory = (clusterId: string, nodes: unknown[], observedAt = new Date()) => ({
  cluster_id: clusterId,
  observed_at: observedAt.toISOString(),
  nodes,
});
const rowsOf = async (table: string, clusterId: string) => bed.t.database.db(table).where({ cluster_id: clusterId });

describe("opening the internal plane", () => {
  it("binds nothing while no source range is configured", async () => {
    const port = await closedPort();
    const listener = await startInternalListener(bed.t.deps, { host: "127.0.0.1", port });
    expect(bed.t.deps.config.internal.allowCidrs).toEqual([]);
    expect(listener).toBeUndefined();
    const refused = await new Promise<string>((resolve) => {
      const s = createConnection({ host: "127.0.0.1", port });
      s.on("connect", () => {
        s.destroy();
        resolve("connected");
      });
      s.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
    });
    expect(refused).toBe("ECONNREFUSED");
  });

  it("answers 403 forbidden to a peer outside the configured ranges", async () => {
    const narrow = await startInternalListener(bed.t.deps, {
      allowCidrs: ["10.0.0.0/8", "fd00::/8"],
      host: "127.0.0.1",
      port: 0,
    });
    try {
      const res = await call(narrow?.url ?? "", "GET", "/.well-known/svc-internal-jwks.json");
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({
        code: "forbidden",
        request_id: expect.any(String),
        timestamp: expect.any(String),
      });
      const report = await call(narrow?.url ?? "", "PUT", "/internal/v1/inventory", {
        token: clusters.a.token,
        json: inventory(clusters.a.id, []),
      });
      expect(report.status).toBe(403);
    } finally {
      await narrow?.close();
    }
  });

  it("admits IPv6 peers by IPv6 range, and IPv4 peers on a dual-stack socket by IPv4 range", async () => {
    const v6 = await startInternalListener(bed.t.deps, { allowCidrs: ["::1/128"], host: "::1", port: 0 });
    const dual = await startInternalListener(bed.t.deps, { allowCidrs: ["127.0.0.1/32"], host: "::", port: 0 });
    try {
      expect((await call(`http://[::1]:${v6?.port}`, "GET", "/.well-known/svc-internal-jwks.json")).status).toBe(200);
      // The peer shows as ::ffff:127.0.0.1 on the dual-stack socket.
      expect((await call(`http://127.0.0.1:${dual?.port}`, "GET", "/.well-known/svc-internal-jwks.json")).status).toBe(
        200,
      );
      expect((await call(`http://[::1]:${dual?.port}`, "GET", "/.well-known/svc-internal-jwks.json")).status).toBe(403);
    } finally {
      await v6?.close();
      await dual?.close();
    }
  });

  it("serves /internal and /.well-known only, and the public listener serves neither", async () => {
    expect((await internal("GET", "/api/v1/clusters", { token: bed.superAdmin.token })).status).toBe(404);
    expect((await internal("GET", "/healthz")).status).toBe(404);
    // Internal-plane routes have no operation id (not in api/openapi.json): asked for raw on the public listener.
    const jwks = await bed.t.request("GET", "/.well-known/svc-internal-jwks.json");
    expect(jwks.status).toBe(404);
    expect(jwks.body.error.code).toBe("not_found");
    const put = await bed.t.request("PUT", "/internal/v1/inventory", {
      token: clusters.a.token,
      json: inventory(clusters.a.id, []),
    });
    expect(put.status).toBe(404);
    expect(await rowsOf("cluster_nodes", clusters.a.id)).toHaveLength(0);
  });
});

describe("operator tokens", () => {
  it("verify against the published key set", async () => {
    const res = await internal("GET", "/.well-known/svc-internal-jwks.json");
    expect(res.status).toBe(200);
    expect(res.body.keys).toHaveLength(1);
    expect(res.body.keys[0]).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig", kid: bed.runtime.tokens.kid });
    expect(res.body.keys[0]).not.toHaveProperty("d");
    const { payload, protectedHeader } = await jwtVerify(clusters.a.token, createLocalJWKSet(res.body), {
      issuer: "berth-control-plane",
      audience: "berth-internal",
      currentDate: bed.tokenClock.now(),
    });
    expect(protectedHeader).toMatchObject({ alg: "RS256", kid: bed.runtime.tokens.kid });
    expect(payload.sub).toBe(`operator:${clusters.a.id}`);
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(604_800);
    expect(payload.jti).toEqual(expect.any(String));
  });

  it("are signed with the key kept in the management cluster, created once even by racing replicas", async () => {
    const core = kubeConfigFrom(bed.fleet.cluster("mgmt").kubeconfig).makeApiClient(CoreV1Api);
    const secret = await core.readNamespacedSecret({ name: SIGNING_KEY_SECRET, namespace: "berth-system" });
    expect(Buffer.from(secret.data?.kid ?? "", "base64").toString()).toBe(bed.runtime.tokens.kid);
    const kc = kubeConfigFrom(bed.fleet.cluster("mgmt").kubeconfig);
    // Each racer a replica with a client of its own.
    const replicas = [1, 2, 3, 4].map(() => new HttpKube(kc));
    try {
      const racers = await Promise.all(
        replicas.map((kube) => loadOrCreateSigningKey({ kube, name: "race-signing-key" })),
      );
      expect(new Set(racers.map((k) => k.kid)).size).toBe(1);
      // A restart loads the same key.
      expect((await loadOrCreateSigningKey({ kube: replicas[0] as HttpKube })).kid).toBe(bed.runtime.tokens.kid);
    } finally {
      for (const k of replicas) k.close();
    }
  });

  it("refuse a missing token, a user token, another key's token and another audience with 401 unauthenticated", async () => {
    const body = inventory(clusters.a.id, []);
    const none = await internal("PUT", "/internal/v1/inventory", { json: body });
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe("unauthenticated");

    const user = await internal("PUT", "/internal/v1/inventory", { token: bed.superAdmin.token, json: body });
    expect(user.status).toBe(401);
    expect(user.body.error.code).toBe("unauthenticated");

    const { privateKey } = await generateKeyPair("RS256");
    const now = Math.floor(bed.tokenClock.now().getTime() / 1000);
    const forge = (aud: string, key: CryptoKey | KeyObject = privateKey) =>
      new SignJWT({})
        .setProtectedHeader({ alg: "RS256", kid: bed.runtime.tokens.kid })
        .setIssuer("berth-control-plane")
        .setAudience(aud)
        .setSubject(`operator:${clusters.a.id}`)
        .setIssuedAt(now)
        .setExpirationTime(now + 600)
        .setJti("otk_forged")
        .sign(key);
    const forged = await internal("PUT", "/internal/v1/inventory", {
      token: await forge("berth-internal"),
      json: body,
    });
    expect(forged.status).toBe(401);
    expect(forged.body.error.code).toBe("unauthenticated");
    // Our own key, but a token meant for someone else.
    const mgmt = new HttpKube(kubeConfigFrom(bed.fleet.cluster("mgmt").kubeconfig));
    const ours = await loadOrCreateSigningKey({ kube: mgmt }).finally(() => mgmt.close());
    const otherAudience = await internal("PUT", "/internal/v1/inventory", {
      token: await forge("someone-else", ours.privateKey),
      json: body,
    });
    expect(otherAudience.status).toBe(401);
    expect(otherAudience.body.error.code).toBe("unauthenticated");
    expect(await rowsOf("cluster_nodes", clusters.a.id)).toHaveLength(0);
  });

  it("answer 401 token_expired once seven days have passed", async () => {
    bed.tokenClock.advance(604_801);
    try {
      const res = await internal("PUT", "/internal/v1/inventory", {
        token: clusters.a.token,
        json: inventory(clusters.a.id, [aNode("gpu-a-1", H100, 8)]),
      });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe("token_expired");
      expect(await rowsOf("cluster_nodes", clusters.a.id)).toHaveLength(0);
    } finally {
      bed.tokenClock.advance(-604_801);
    }
  });

  it("stop working when rotated: the new token works, the old one is 401", async () => {
    const rotated = await bedApi(bed, bed.superAdmin).call("rotateClusterOperatorToken", {
      params: { clusterId: clusters.b.id },
    });
    const old = await internal("PUT", "/internal/v1/inventory", {
      token: clusters.b.token,
      json: inventory(clusters.b.id, []),
    });
    expect(old.status).toBe(401);
    expect(old.body.error.code).toBe("unauthenticated");
    clusters.b.token = rotated.token;
    const fresh = await internal("PUT", "/internal/v1/inventory", {
      token: clusters.b.token,
      json: inventory(clusters.b.id, []),
    });
    expect(fresh.status).toBe(200);
  });
});

describe("inventory", () => {
  it("appears through the public API as nodes, GPU devices and node pools", async () => {
    const res = await internal("PUT", "/internal/v1/inventory", {
      token: clusters.a.token,
      json: inventory(clusters.a.id, [
        aNode("gpu-a-1", H100, 8),
        aNode("gpu-a-2", H100, 8, { gpu_in_use: 3 }),
        aNode("gpu-a-3", L4, 4, { schedulable: false }),
      ]),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ accepted: 3, removed: 0 });
    await internal("PUT", "/internal/v1/inventory", {
      token: clusters.b.token,
      json: inventory(clusters.b.id, [aNode("gpu-b-1", L4, 4)]),
    });

    const admin = bedApi(bed, bed.superAdmin);
    const nodes = await admin.call("listNodes", { query: { cluster: clusters.a.id } });
    expect(nodes.pagination.total).toBe(3);
    expect(nodes.data[1]).toMatchObject({
      cluster_id: clusters.a.id,
      name: "gpu-a-2",
      gpu_model: H100,
      gpu_count: 8,
      gpu_in_use: 3,
      schedulable: true,
      ready: true,
    });
    const all = await admin.call("listNodes", { query: { size: 2 } });
    expect(all.pagination).toEqual({ page: 1, size: 2, total: 4 });
    const devices = await admin.call("listGpuDevices", { query: { cluster: clusters.a.id, node: "gpu-a-3" } });
    expect(devices.data).toHaveLength(4);
    expect(devices.data[0]).toEqual({
      cluster_id: clusters.a.id,
      node: "gpu-a-3",
      index: 0,
      model: L4,
      uuid: "GPU-gpu-a-3-0",
      memory_mib: 81_559,
      sharing: null,
    });
    const pools = await admin.call("listNodePools", { query: { cluster: clusters.a.id } });
    expect(pools.data).toEqual([
      {
        cluster_id: clusters.a.id,
        gpu_model: H100,
        nodes: 2,
        ready_nodes: 2,
        schedulable_nodes: 2,
        gpu_count: 16,
        gpu_allocatable: 16,
        gpu_in_use: 3,
        gpu_free: 13,
      },
      {
        cluster_id: clusters.a.id,
        gpu_model: L4,
        nodes: 1,
        ready_nodes: 1,
        schedulable_nodes: 0,
        gpu_count: 4,
        gpu_allocatable: 4,
        gpu_in_use: 0,
        gpu_free: 0,
      },
    ]);
    const cluster = await admin.call("getCluster", { params: { clusterId: clusters.a.id } });
    expect(cluster.inventory).toEqual({ nodes: 3, gpus: 20 });
    expect(cluster.last_report_at).toEqual(expect.any(String));
  });

  it("is a full snapshot: a node missing from the next one is removed, and an older snapshot is ignored", async () => {
    const later = new Date(Date.now() + 1000);
    const res = await internal("PUT", "/internal/v1/inventory", {
      token: clusters.a.token,
      json: inventory(clusters.a.id, [aNode("gpu-a-1", H100, 8), aNode("gpu-a-2", H100, 8)], later),
    });
    expect(res.body).toEqual({ accepted: 2, removed: 1 });
    const stale = await internal("PUT", "/internal/v1/inventory", {
      token: clusters.a.token,
      json: inventory(clusters.a.id, [], new Date(later.getTime() - 60_000)),
    });
    expect(stale.body).toEqual({ accepted: 0, removed: 0, stale: true });
    expect((await rowsOf("cluster_nodes", clusters.a.id)).map((n) => n.name).sort()).toEqual(["gpu-a-1", "gpu-a-2"]);
  });

  it("for another cluster than the token's is 403 forbidden and writes nothing", async () => {
    const before = {
      a: await rowsOf("cluster_nodes", clusters.a.id),
      b: await rowsOf("cluster_nodes", clusters.b.id),
      devices: await rowsOf("gpu_devices", clusters.b.id),
    };
    const res = await internal("PUT", "/internal/v1/inventory", {
      token: clusters.a.token,
      json: inventory(clusters.b.id, [aNode("gpu-b-9", L4, 4)], new Date(Date.now() + 5000)),
    });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("forbidden");
    expect(await rowsOf("cluster_nodes", clusters.a.id)).toEqual(before.a);
    expect(await rowsOf("cluster_nodes", clusters.b.id)).toEqual(before.b);
    expect(await rowsOf("gpu_devices", clusters.b.id)).toEqual(before.devices);
  });

  it("refuses a malformed snapshot whole, with the fields that are wrong", async () => {
    const later = new Date(Date.now() + 10_000);
    const put = (nodes: unknown[]) =>
      internal("PUT", "/internal/v1/inventory", {
        token: clusters.a.token,
        json: inventory(clusters.a.id, nodes, later),
      });
    const paths = (res: { body: { error: { details: { issues: { path: unknown[] }[] } } } }) =>
      res.body.error.details.issues.map((i) => i.path.join("."));
    const bad = await put([aNode("gpu-a-1", H100, 8), { ...aNode("gpu-a-9", H100, 8), gpu_count: -1, ready: "yes" }]);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("validation_failed");
    expect(paths(bad)).toEqual(["body.nodes.1.gpu_count", "body.nodes.1.ready"]);
    const twice = await put([aNode("gpu-a-1", H100, 8), aNode("gpu-a-1", H100, 8)]);
    expect(twice.status).toBe(400);
    expect(paths(twice)).toEqual(["body.nodes.1.name"]);
    expect((await rowsOf("cluster_nodes", clusters.a.id)).map((n) => n.name).sort()).toEqual(["gpu-a-1", "gpu-a-2"]);
  });
});

describe("session status and usage reports", () => {
  const sessionOnA = () => ({
    id: "ses-1",
    cr_name: "ses-1",
    namespace: "org-x",
    owner_id: "usr_x",
    organization_id: "org_x",
    offering: "h100",
    preset: "gpu-small",
    image: "jupyterlab",
    gpu_model: H100,
    gpu_count: 1,
    hourly_credit_rate: "0",
    cluster_id: clusters.a.id,
    phase: "Starting",
  });
  const sample = (id: string) => ({
    id,
    session: "ses-1",
    start: "2026-11-22T06:00:00Z",
    end: "2026-11-22T06:01:00Z",
    gpu_seconds: 60,
    gpu_utilization: 87.5,
  });

  it("store usage samples once per (cluster, sample id)", async () => {
    // Usage is accepted only for sessions that are, or were, placed on the reporting cluster.
    await bed.t.database.db("sessions").insert(sessionOnA()).onConflict("id").ignore();
    const first = await internal("POST", "/internal/v1/usage", {
      token: clusters.a.token,
      json: { cluster_id: clusters.a.id, samples: [sample("s1"), sample("s2")] },
    });
    expect(first.body).toEqual({ accepted: 2, duplicates: 0 });
    const retry = await internal("POST", "/internal/v1/usage", {
      token: clusters.a.token,
      json: { cluster_id: clusters.a.id, samples: [sample("s2"), sample("s3")] },
    });
    expect(retry.body).toEqual({ accepted: 1, duplicates: 1 });
    expect(await rowsOf("usage_samples", clusters.a.id)).toHaveLength(3);
  });

  it("refuse a sample longer than an operator's longest interval, or numbers Postgres cannot hold, with 400", async () => {
    await bed.t.database.db("sessions").insert(sessionOnA()).onConflict("id").ignore();
    const before = (await rowsOf("usage_samples", clusters.a.id)).length;
    for (const bad of [
      { ...sample("s-long"), start: "2020-01-01T00:00:00Z" }, // six years in one sample
      { ...sample("s-mem"), gpu_memory_mib: 2 ** 31 },
    ]) {
      const res = await internal("POST", "/internal/v1/usage", {
        token: clusters.a.token,
        json: { cluster_id: clusters.a.id, samples: [sample("s-fine"), bad] },
      });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
    }
    expect(await rowsOf("usage_samples", clusters.a.id)).toHaveLength(before);
  });

  it("for another cluster are 403 forbidden and write nothing", async () => {
    const usage = await internal("POST", "/internal/v1/usage", {
      token: clusters.a.token,
      json: { cluster_id: clusters.b.id, samples: [sample("s9")] },
    });
    expect(usage.status).toBe(403);
    const status = await internal("POST", "/internal/v1/sessions/status", {
      token: clusters.a.token,
      json: {
        cluster_id: clusters.b.id,
        reports: [
          {
            session: "ses-1",
            phase: "Running",
            reason: "Started",
            message: "",
            observed_generation: 1,
            at: new Date().toISOString(),
          },
        ],
      },
    });
    expect(status.status).toBe(403);
    expect(await rowsOf("usage_samples", clusters.b.id)).toHaveLength(0);
    expect(await rowsOf("session_status_reports", clusters.b.id)).toHaveLength(0);
  });

  it("keep the latest status report per session", async () => {
    // Reports are accepted only for sessions placed on the reporting cluster (sessions domain).
    await bed.t.database.db("sessions").insert(sessionOnA()).onConflict("id").ignore();
    const at = (s: number) => new Date(Date.UTC(2026, 10, 22, 6, 0, s)).toISOString();
    const res = await internal("POST", "/internal/v1/sessions/status", {
      token: clusters.a.token,
      json: {
        cluster_id: clusters.a.id,
        reports: [
          {
            session: "ses-1",
            phase: "Starting",
            node: "gpu-a-1",
            reason: "PodCreated",
            message: "",
            observed_generation: 1,
            at: at(1),
          },
          {
            session: "ses-1",
            phase: "Running",
            node: "gpu-a-1",
            gpu_devices: [0],
            reason: "PodReady",
            message: "",
            observed_generation: 1,
            at: at(2),
          },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBe(2);
    const rows = await rowsOf("session_status_reports", clusters.a.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ session: "ses-1", phase: "Running", node: "gpu-a-1" });
  });

  it("from a deregistered cluster are 403", async () => {
    await bedApi(bed, bed.superAdmin).call("deregisterCluster", { params: { clusterId: clusters.b.id } });
    const late = await internal("POST", "/internal/v1/usage", {
      token: clusters.b.token,
      json: { cluster_id: clusters.b.id, samples: [sample("late")] },
    });
    expect(late.status).toBe(403);
    expect(late.body.error.code).toBe("forbidden");
    const inv = await internal("PUT", "/internal/v1/inventory", {
      token: clusters.b.token,
      json: inventory(clusters.b.id, [aNode("gpu-b-1", L4, 4)], new Date(Date.now() + 60_000)),
    });
    expect(inv.status).toBe(403);
    expect(await rowsOf("cluster_nodes", clusters.b.id)).toHaveLength(0);
  });
});

describe("the API process", () => {
  it("opens the internal plane from its configuration, with the key from the management cluster and every domain's internal routes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "berth-api-"));
    const kubeconfig = join(dir, "mgmt.yaml");
    writeFileSync(kubeconfig, bed.managementKubeconfig, { mode: 0o600 });
    const api = await startApi({
      config: testConfig({
        DATABASE_URL: bed.t.database.url,
        BERTH_KUBECONFIG: kubeconfig,
        BERTH_INTERNAL_HOST: "127.0.0.1",
        BERTH_INTERNAL_PORT: "0",
        BERTH_INTERNAL_ALLOW_CIDRS: "127.0.0.0/8",
      }),
      db: bed.t.database.db,
      migrate: false,
      startupTasks: [],
    });
    try {
      expect(api.internalUrl).toBeDefined();
      const base = api.internalUrl ?? "";
      const jwks = await call(base, "GET", "/.well-known/svc-internal-jwks.json");
      expect(jwks.body.keys[0].kid).toBe(bed.runtime.tokens.kid);
      const report = await call(base, "PUT", "/internal/v1/inventory", {
        token: clusters.a.token,
        json: inventory(clusters.a.id, [aNode("gpu-a-1", H100, 8)], new Date(Date.now() + 120_000)),
      });
      expect(report.status).toBe(200);
      // The connect domain's route is there too, behind the same operator auth.
      const verify = await call(base, "GET", "/internal/connect/verify?cr=x");
      expect(verify.status).toBe(401);
      expect((await call(api.url, "GET", "/.well-known/svc-internal-jwks.json")).status).toBe(404);
      expect((await call(api.url, "GET", "/internal/connect/verify?cr=x")).status).toBe(404);
    } finally {
      await api.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
