// A super_admin registers GPU clusters: the control plane probes each one with the credential it was
// given (a least-privilege ServiceAccount) and accepts only a reachable cluster with the GPU runtime
// class, the GPU device plugin and the permissions Berth needs; then tests, changes, rotates and
// deregisters it. Everyone else is refused.

import { controlPlaneRbac } from "@berth/api/rbac";
import { applyInventory } from "@berth/api/testing";
import { ClusterKind, clusterResourceName } from "@berth/crds";
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { kubeConfigFrom } from "../index.ts";
import { statusFrom } from "../testbed/waiting.test-support.ts";
import {
  adminKube,
  type ClustersBed,
  closedPort,
  mintControlPlaneCredential,
  silentServer,
  startClustersBed,
} from "./harness.ts";

const PROBE_TIMEOUT_MS = 3_000;
const H100 = "NVIDIA-H100-80GB-HBM3";

let bed: ClustersBed;
let mgmtCustom: CustomObjectsApi;
let mgmtCore: CoreV1Api;

beforeAll(async () => {
  bed = await startClustersBed(
    {
      clusters: [
        { name: "mgmt", kind: "management" },
        {
          name: "gpu-a",
          kind: "gpu",
          nodes: [{ name: "gpu-a-1", gpuModel: H100, gpuCount: 8 }],
          gpuRuntimeClass: true,
          gpuDevicePlugin: true,
        },
        { name: "no-runtime", kind: "gpu", gpuRuntimeClass: false, gpuDevicePlugin: true },
        { name: "no-plugin", kind: "gpu", gpuRuntimeClass: true, gpuDevicePlugin: false },
      ],
    },
    { options: { probeTimeoutMs: PROBE_TIMEOUT_MS } },
  );
  const kc = kubeConfigFrom(bed.fleet.cluster("mgmt").kubeconfig);
  mgmtCustom = kc.makeApiClient(CustomObjectsApi);
  mgmtCore = kc.makeApiClient(CoreV1Api);
});

afterAll(async () => {
  await bed?.stop();
});

const G = { group: ClusterKind.group, version: ClusterKind.version, plural: ClusterKind.plural };
const asAdmin = () => ({ token: bed.superAdmin.token });

async function register(name: string, credential: unknown, sessionDomain = `${name}.sessions.localhost`) {
  return bed.t.request("POST", "/api/v1/clusters", {
    ...asAdmin(),
    json: { name, session_domain: sessionDomain, credential },
  });
}

async function liveRows(name: string) {
  return bed.t.database.db("clusters").where({ name }).whereNull("deregistered_at");
}

describe("registering a GPU cluster", () => {
  let registered: { id: string; token: string; saToken: string };

  it("accepts a GPU cluster probed with a least-privilege credential and answers its operator token once", async () => {
    const credential = await bed.credentialFor("gpu-a");
    const res = await register("gpu-a", credential, "gpu-a.sessions.localhost:8443");
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const { cluster, operator_token } = res.body;
    expect(cluster).toMatchObject({
      name: "gpu-a",
      session_domain: "gpu-a.sessions.localhost:8443",
      status: "connected",
      checks: { reachable: true, gpu_runtime_class: true, gpu_device_plugin: true, credential_permissions: true },
      deregistered_at: null,
    });
    expect(cluster.id).toMatch(/^clu_[a-z0-9]{16}$/);
    expect(operator_token).toMatchObject({ token_type: "Bearer", expires_in: 604_800, kid: bed.runtime.tokens.kid });
    expect(operator_token.token.split(".")).toHaveLength(3);
    expect(cluster.operator_token).toEqual({
      kid: operator_token.kid,
      issued_at: expect.any(String),
      expires_at: expect.any(String),
    });
    // The credential went in and never comes out.
    expect(JSON.stringify(res.body)).not.toContain(credential.token);
    registered = { id: cluster.id, token: operator_token.token, saToken: credential.token };

    // The Cluster resource, the credential Secret and the history row.
    const cr = (await mgmtCustom.getClusterCustomObject({ ...G, name: clusterResourceName(cluster.id) })) as {
      spec: {
        id: string;
        displayName: string;
        sessionDomain: string;
        credentialSecretRef: { namespace: string; name: string };
      };
      status: { probe: { status: string; checks: Record<string, boolean> }; operatorToken: { kid: string } };
    };
    expect(cr.spec).toMatchObject({
      id: cluster.id,
      displayName: "gpu-a",
      sessionDomain: "gpu-a.sessions.localhost:8443",
    });
    expect(cr.status.probe).toMatchObject({
      status: "connected",
      checks: { reachable: true, gpu_runtime_class: true },
    });
    expect(cr.status.operatorToken.kid).toBe(operator_token.kid);
    expect(cr.spec.credentialSecretRef.namespace).toBe("berth-system");
    const secret = await mgmtCore.readNamespacedSecret({
      name: cr.spec.credentialSecretRef.name,
      namespace: "berth-system",
    });
    expect(Buffer.from(secret.data?.kubeconfig ?? "", "base64").toString()).toContain(credential.token);
    expect(await liveRows("gpu-a")).toHaveLength(1);
  });

  it("never returns the credential from a read", async () => {
    const one = await bed.t.request("GET", `/api/v1/clusters/${registered.id}`, asAdmin());
    const list = await bed.t.request("GET", "/api/v1/clusters", asAdmin());
    expect(one.status).toBe(200);
    expect(list.status).toBe(200);
    for (const body of [one.body, list.body]) {
      const text = JSON.stringify(body);
      expect(text).not.toContain(registered.saToken);
      expect(text).not.toContain("kubeconfig");
      expect(text).not.toContain(registered.token);
    }
    expect(list.body.data.map((c: { id: string }) => c.id)).toContain(registered.id);
  });

  it("refuses a second cluster under a name that is registered", async () => {
    const res = await register("gpu-a", await bed.credentialFor("gpu-a"));
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("already_exists");
  });

  it("accepts a kubeconfig credential, and refuses one that would run a program", async () => {
    const cred = await mintControlPlaneCredential(bed.fleet.cluster("gpu-a"), { name: "berth-by-kubeconfig" });
    const ok = await register("gpu-a-by-kubeconfig", { kubeconfig: cred.kubeconfig });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(ok.body.cluster.status).toBe("connected");

    const doc = parseYaml(cred.kubeconfig) as { users: { user: Record<string, unknown> }[] };
    const user = doc.users[0]?.user ?? {};
    delete user.token;
    user.exec = { apiVersion: "client.authentication.k8s.io/v1", command: "/bin/sh", args: ["-c", "touch /tmp/pwned"] };
    const bad = await register("gpu-a-exec", { kubeconfig: stringifyYaml(doc) });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("validation_failed");
    expect(bad.body.error.details.issues[0].path).toEqual(["body", "credential", "kubeconfig"]);
    expect(bad.body.error.message).toContain("user.exec is not accepted");
    expect(await liveRows("gpu-a-exec")).toHaveLength(0);
  });

  it("refuses a cluster without the GPU runtime class, with every check in the details", async () => {
    const res = await register("no-runtime", await bed.credentialFor("no-runtime"));
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("gpu_runtime_class_missing");
    expect(res.body.error.details.checks).toEqual({
      reachable: true,
      gpu_runtime_class: false,
      gpu_device_plugin: true,
      credential_permissions: true,
    });
    expect(await liveRows("no-runtime")).toHaveLength(0);
  });

  it("refuses a cluster without the GPU device plugin", async () => {
    const res = await register("no-plugin", await bed.credentialFor("no-plugin"));
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("gpu_device_plugin_missing");
    expect(res.body.error.details.checks).toEqual({
      reachable: true,
      gpu_runtime_class: true,
      gpu_device_plugin: false,
      credential_permissions: true,
    });
    expect(await liveRows("no-plugin")).toHaveLength(0);
  });

  it("refuses a credential that lacks a permission Berth needs, and names the permission", async () => {
    const rbac = controlPlaneRbac();
    const sessions = rbac.namespaceRules[0];
    if (!sessions) throw new Error("no session namespace rules");
    const withoutEviction = {
      ...rbac,
      namespaceRules: [
        { ...sessions, rules: sessions.rules.filter((r) => !r.resources.includes("pods/eviction")) },
        ...rbac.namespaceRules.slice(1),
      ],
    };
    const res = await register(
      "gpu-a-weak",
      await bed.credentialFor("gpu-a", { name: "berth-weak", rbac: withoutEviction }),
    );
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("cluster_credential_insufficient");
    expect(res.body.error.details.missing_permissions).toEqual(["create pods/eviction in berth-sessions"]);
    expect(res.body.error.details.checks.credential_permissions).toBe(false);
  });

  it("refuses a credential the cluster does not accept", async () => {
    const c = bed.fleet.cluster("gpu-a");
    const res = await register("gpu-a-bad-token", {
      server: c.server,
      ca_data: c.caPem,
      token: "not-a-token-of-this-cluster",
    });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("cluster_credential_invalid");
    expect(res.body.error.details.checks.reachable).toBe(true);
  });

  it("refuses an address that refuses connections, at once", async () => {
    const port = await closedPort();
    const res = await register("closed", {
      server: `https://127.0.0.1:${port}`,
      ca_data: bed.fleet.cluster("gpu-a").caPem,
      token: "x",
    });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("cluster_unreachable");
    // ECONNREFUSED, not TIMEOUT: it did not wait out the probe (no stopwatch: a loaded machine is slow).
    expect(res.body.error.details.error.reason).toBe("ECONNREFUSED");
    expect(res.body.error.details.checks).toEqual({
      reachable: false,
      gpu_runtime_class: false,
      gpu_device_plugin: false,
      credential_permissions: false,
    });
  });

  it("gives up on an address that never answers when the configured timeout passes", async () => {
    const silent = await silentServer();
    try {
      const started = Date.now();
      const res = await register("silent", {
        server: `https://127.0.0.1:${silent.port}`,
        ca_data: bed.fleet.cluster("gpu-a").caPem,
        token: "x",
      });
      const elapsed = Date.now() - started;
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe("cluster_unreachable");
      expect(res.body.error.details.error.reason).toBe("TIMEOUT");
      expect(elapsed).toBeGreaterThanOrEqual(PROBE_TIMEOUT_MS - 50);
      expect(elapsed).toBeLessThan(PROBE_TIMEOUT_MS + 30_000); // the configured timeout, far below the default 120 s
    } finally {
      await silent.close();
    }
  });
});

describe("a registered cluster", () => {
  let id: string;
  beforeAll(async () => {
    const res = await register("gpu-a-admin", await bed.credentialFor("gpu-a"));
    expect(res.status).toBe(201);
    id = res.body.cluster.id;
  });

  it("passes the connection test with a boolean per check, and reports what broke when a check fails", async () => {
    const ok = await bed.t.request("POST", `/api/v1/clusters/${id}/connection-test`, { ...asAdmin(), json: {} });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      status: "connected",
      checks: { reachable: true, gpu_runtime_class: true, gpu_device_plugin: true, credential_permissions: true },
    });
    expect(ok.body.server_version).toMatch(/^v1\./);

    const kube = adminKube(bed.fleet.cluster("gpu-a"));
    const rc = await kube.json<Record<string, unknown>>("GET", "/apis/node.k8s.io/v1/runtimeclasses/nvidia");
    await kube.json("DELETE", "/apis/node.k8s.io/v1/runtimeclasses/nvidia");
    try {
      const degraded = await bed.t.request("POST", `/api/v1/clusters/${id}/connection-test`, {
        ...asAdmin(),
        json: {},
      });
      expect(degraded.status).toBe(200);
      expect(degraded.body.status).toBe("degraded");
      expect(degraded.body.checks.gpu_runtime_class).toBe(false);
      expect(degraded.body.message).toContain("RuntimeClass");
      const cr = (await mgmtCustom.getClusterCustomObject({ ...G, name: clusterResourceName(id) })) as {
        status: { probe: { status: string }; conditions: { type: string; status: string; reason: string }[] };
      };
      expect(cr.status.probe.status).toBe("degraded");
      expect(cr.status.conditions.find((c) => c.type === "Accepted")).toMatchObject({
        status: "False",
        reason: "GpuRuntimeClassMissing",
      });
    } finally {
      await kube.json("POST", "/apis/node.k8s.io/v1/runtimeclasses", {
        apiVersion: "node.k8s.io/v1",
        kind: "RuntimeClass",
        metadata: { name: "nvidia" },
        handler: rc.handler,
      });
      kube.close();
    }
    const again = await bed.t.request("POST", `/api/v1/clusters/${id}/connection-test`, { ...asAdmin(), json: {} });
    expect(again.body.status).toBe("connected");
  });

  it("takes a new session_domain (hostname[:port]) and refuses anything else", async () => {
    const ok = await bed.t.request("PATCH", `/api/v1/clusters/${id}`, {
      ...asAdmin(),
      json: { session_domain: "Sessions.GPU-A.example.com:9443" },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.session_domain).toBe("sessions.gpu-a.example.com:9443");
    const cr = (await mgmtCustom.getClusterCustomObject({ ...G, name: clusterResourceName(id) })) as {
      spec: { sessionDomain: string };
    };
    expect(cr.spec.sessionDomain).toBe("sessions.gpu-a.example.com:9443");
    for (const bad of ["https://a.example.com", "a.example.com/path", "a.example.com:70000", "-a.example.com", ""]) {
      const res = await bed.t.request("PATCH", `/api/v1/clusters/${id}`, {
        ...asAdmin(),
        json: { session_domain: bad },
      });
      expect(res.status, bad).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
    }
    const name = await bed.t.request("PATCH", `/api/v1/clusters/${id}`, { ...asAdmin(), json: { name: "renamed" } });
    expect(name.status).toBe(400);
  });

  it("rotates its operator token: a new one, recorded on the resource", async () => {
    const before = (await bed.t.database.db("clusters").where({ id }).first()).operator_token_jti;
    bed.tokenClock.advance(5);
    const res = await bed.t.request("POST", `/api/v1/clusters/${id}/operator-token`, asAdmin());
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ token_type: "Bearer", expires_in: 604_800 });
    const claims = await bed.runtime.tokens.verify(res.body.token);
    expect(claims.clusterId).toBe(id);
    const after = (await bed.t.database.db("clusters").where({ id }).first()).operator_token_jti;
    expect(after).toBe(claims.jti);
    expect(after).not.toBe(before);
    const cr = (await mgmtCustom.getClusterCustomObject({ ...G, name: clusterResourceName(id) })) as {
      status: { operatorToken: { issuedAt: string } };
    };
    expect(cr.status.operatorToken.issuedAt).toBe(`${res.body.issued_at.slice(0, 19)}Z`);
  });

  it("is not deregistered while work lives on it; then its resource, credential, nodes and devices go and its history stays", async () => {
    await applyInventory(bed.t.deps, id, new Date(), [
      {
        name: "gpu-a-1",
        gpu_model: H100,
        gpu_count: 8,
        gpu_allocatable: 8,
        gpu_in_use: 0,
        labels: {},
        schedulable: true,
        ready: true,
        devices: [{ index: 0 }, { index: 1 }],
      },
    ]);
    bed.liveWork.add(id);
    const refused = await bed.t.request("DELETE", `/api/v1/clusters/${id}`, asAdmin());
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("cluster_in_use");
    expect(await statusFrom(() => mgmtCustom.getClusterCustomObject({ ...G, name: clusterResourceName(id) }))).toBe(
      200,
    );
    expect(await bed.t.database.db("cluster_nodes").where({ cluster_id: id })).toHaveLength(1);

    bed.liveWork.delete(id);
    const cr = (await mgmtCustom.getClusterCustomObject({ ...G, name: clusterResourceName(id) })) as {
      spec: { credentialSecretRef: { name: string } };
    };
    const res = await bed.t.request("DELETE", `/api/v1/clusters/${id}`, asAdmin());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, removed: { nodes: 1, gpu_devices: 2 } });
    expect(await statusFrom(() => mgmtCustom.getClusterCustomObject({ ...G, name: clusterResourceName(id) }))).toBe(
      404,
    );
    expect(
      await statusFrom(() =>
        mgmtCore.readNamespacedSecret({ name: cr.spec.credentialSecretRef.name, namespace: "berth-system" }),
      ),
    ).toBe(404);
    expect(await bed.t.database.db("cluster_nodes").where({ cluster_id: id })).toHaveLength(0);
    expect(await bed.t.database.db("gpu_devices").where({ cluster_id: id })).toHaveLength(0);
    const row = await bed.t.database.db("clusters").where({ id }).first();
    expect(row.deregistered_at).toBeInstanceOf(Date);

    expect((await bed.t.request("GET", `/api/v1/clusters/${id}`, { token: bed.user.token })).status).toBe(404);
    const history = await bed.t.request("GET", `/api/v1/clusters/${id}`, asAdmin());
    expect(history.body).toMatchObject({ id, status: "deregistered" });
    const live = await bed.t.request("GET", "/api/v1/clusters?size=100", asAdmin());
    expect(live.body.data.map((c: { id: string }) => c.id)).not.toContain(id);
    const all = await bed.t.request("GET", "/api/v1/clusters?size=100&include_deregistered=true", asAdmin());
    expect(all.body.data.map((c: { id: string }) => c.id)).toContain(id);
    expect((await bed.t.request("DELETE", `/api/v1/clusters/${id}`, asAdmin())).status).toBe(404);
  });

  it("gets a new id when its name is registered again", async () => {
    const res = await register("gpu-a-admin", await bed.credentialFor("gpu-a"));
    expect(res.status).toBe(201);
    expect(res.body.cluster.id).not.toBe(id);
  });
});

describe("who may do what", () => {
  let id: string;
  beforeAll(async () => {
    const res = await register("gpu-a-roles", await bed.credentialFor("gpu-a"));
    expect(res.status).toBe(201);
    id = res.body.cluster.id;
  });

  const mutations = () => [
    {
      method: "POST",
      path: "/api/v1/clusters",
      json: { name: "x", session_domain: "x.example.com", credential: { server: "https://127.0.0.1:1", token: "x" } },
    },
    { method: "POST", path: `/api/v1/clusters/${id}/connection-test`, json: {} },
    { method: "PATCH", path: `/api/v1/clusters/${id}`, json: { session_domain: "y.example.com" } },
    { method: "DELETE", path: `/api/v1/clusters/${id}` },
    { method: "POST", path: `/api/v1/clusters/${id}/operator-token` },
    { method: "POST", path: `/api/v1/nodes/${id}/gpu-a-1/cordon` },
    { method: "POST", path: `/api/v1/nodes/${id}/gpu-a-1/uncordon` },
    { method: "POST", path: `/api/v1/nodes/${id}/gpu-a-1/drain` },
    { method: "DELETE", path: `/api/v1/nodes/${id}/gpu-a-1` },
  ];
  const reads = () => [
    "/api/v1/clusters",
    `/api/v1/clusters/${id}`,
    "/api/v1/nodes",
    "/api/v1/gpu-devices",
    "/api/v1/node-pools",
  ];

  it("refuses every change to a user who is not super_admin, and changes nothing", async () => {
    for (const m of mutations()) {
      const res = await bed.t.request(m.method, m.path, { token: bed.user.token, ...(m.json ? { json: m.json } : {}) });
      expect(res.status, `${m.method} ${m.path}`).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
    const row = await bed.t.database.db("clusters").where({ id }).first();
    expect(row).toMatchObject({ deregistered_at: null, session_domain: "gpu-a-roles.sessions.localhost" });
  });

  it("shows a user the clusters without probe or token details, and no nodes or devices (not their scope)", async () => {
    await applyInventory(bed.t.deps, id, new Date(), [
      {
        name: "gpu-a-1",
        gpu_model: H100,
        gpu_count: 8,
        gpu_allocatable: 8,
        gpu_in_use: 2,
        labels: {},
        schedulable: true,
        ready: true,
        devices: [{ index: 0 }],
      },
    ]);
    const one = await bed.t.request("GET", `/api/v1/clusters/${id}`, { token: bed.user.token });
    expect(one.status).toBe(200);
    expect(one.body).not.toHaveProperty("checks");
    expect(one.body).not.toHaveProperty("operator_token");
    const nodes = await bed.t.request("GET", `/api/v1/nodes?cluster=${id}`, { token: bed.user.token });
    expect(nodes.body).toEqual({ data: [], pagination: { page: 1, size: 20, total: 0 } });
    const devices = await bed.t.request("GET", "/api/v1/gpu-devices", { token: bed.user.token });
    expect(devices.body.pagination.total).toBe(0);
    const pools = await bed.t.request("GET", `/api/v1/node-pools?cluster=${id}`, { token: bed.user.token });
    expect(pools.body.data).toEqual([
      {
        cluster_id: id,
        gpu_model: H100,
        nodes: 1,
        ready_nodes: 1,
        schedulable_nodes: 1,
        gpu_count: 8,
        gpu_allocatable: 8,
        gpu_in_use: 2,
        gpu_free: 6,
      },
    ]);
    const adminNodes = await bed.t.request("GET", `/api/v1/nodes?cluster=${id}`, asAdmin());
    expect(adminNodes.body.pagination.total).toBe(1);
  });

  it("answers 401 token_expired to an expired token on every route", async () => {
    const expired = await bed.t.expiredTokenFor(bed.superAdmin.id);
    for (const m of [...mutations(), ...reads().map((path) => ({ method: "GET", path, json: undefined }))]) {
      const res = await bed.t.request(m.method, m.path, { token: expired, ...(m.json ? { json: m.json } : {}) });
      expect(res.status, `${m.method} ${m.path}`).toBe(401);
      expect(res.body.error.code).toBe("token_expired");
    }
  });
});
