// biome-ignore-all lint/suspicious/noTemplateCurlyInString: USED_ELSEWHERE quotes calls as the code spells them
// Least privilege, proven with the manifests' own accounts. The ServiceAccounts, Roles, ClusterRoles and
// bindings of the committed testbed manifests (cdk8s/dist/testbed) are applied to the bed's management and
// GPU clusters as they are, tokens are minted for exactly those ServiceAccounts (TokenRequest), and the API,
// the worker and an operator run with them through a session's whole journey (create → Running → pause →
// resume → terminate, a node drain, usage reports) while the apiservers keep an audit log. Then:
// - a request any Berth account was refused (403) is a missing rule, and the journey itself fails where a
//   rule is checked inline (a server-side apply that creates needs `create` too, which the log does not show);
// - a grant no request used must be named in USED_ELSEWHERE with the file whose call needs it (checked to
//   name the resource), else it is a rule to remove.
// BERTH_RBAC_REPORT=<file> writes each account's grant count and what the journey used.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { PolicyRule } from "@berth/crds";
import { type Cluster, type Credential, type FleetDescription, KubeHttp } from "@berth/e2e";
import { bedApi } from "@berth/e2e/api-client";
import { H100, type SessionsBed, startSessionsBed } from "@berth/e2e/sessions";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseAllDocuments } from "yaml";
import { type AuditedRequest, allows, grantKey, grantsOf, type RuleList } from "./rbac.ts";
import { DIST } from "./synth.ts";

vi.setConfig({ testTimeout: 240_000 });

const dir = mkdtempSync(join(tmpdir(), "berth-audit-"));
const policy = join(dir, "policy.yaml");
writeFileSync(
  policy,
  "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n  - level: Metadata\n",
);
const auditArgs = (name: string) => ({
  "kube-apiserver": [`--audit-policy-file=${policy}`, `--audit-log-path=${join(dir, `${name}.log`)}`],
});

const FLEET: FleetDescription = {
  clusters: [
    { name: "mgmt", kind: "management", extraArgs: auditArgs("mgmt") },
    {
      name: "gpu-a",
      kind: "gpu",
      nodes: [
        { name: "gpu-a-1", gpuModel: H100, gpuCount: 2 },
        { name: "gpu-a-2", gpuModel: H100, gpuCount: 2 },
      ],
      gpuRuntimeClass: true,
      gpuDevicePlugin: true,
      extraArgs: auditArgs("gpu-a"),
    },
  ],
};

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: PolicyRule[];
  subjects?: { kind: string; name: string; namespace: string }[];
};

const ACCOUNT_KINDS: Record<string, string> = {
  ServiceAccount: "serviceaccounts",
  ClusterRole: "clusterroles",
  ClusterRoleBinding: "clusterrolebindings",
  Role: "roles",
  RoleBinding: "rolebindings",
};

/** The accounts and their grants in one committed manifest file of the testbed environment. */
function accountObjects(file: string): Obj[] {
  return parseAllDocuments(readFileSync(join(DIST, "testbed", file), "utf8"))
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => !!o && o.kind in ACCOUNT_KINDS);
}

/** An account's grants as its manifests state them: its ClusterRole and the Roles bound to it. */
function rulesOf(objects: Obj[], namespace: string, name: string): RuleList {
  const bound = (kind: string) =>
    objects.filter(
      (o) =>
        o.kind === kind &&
        o.subjects?.some((x) => x.kind === "ServiceAccount" && x.name === name && x.namespace === namespace),
    );
  const role = (kind: string, roleName: string, ns?: string) =>
    objects.find((o) => o.kind === kind && o.metadata.name === roleName && o.metadata.namespace === ns);
  const refOf = (b: Obj) => (b as unknown as { roleRef: { name: string } }).roleRef.name;
  return {
    clusterRules: bound("ClusterRoleBinding").flatMap((b) => role("ClusterRole", refOf(b))?.rules ?? []),
    namespaceRules: bound("RoleBinding").map((b) => ({
      namespace: b.metadata.namespace as string,
      rules: role("Role", refOf(b), b.metadata.namespace)?.rules ?? [],
    })),
  };
}

/** Applies the file's account objects to `c` (server-side apply, as `kubectl apply --server-side`). */
async function applyAccounts(c: Cluster, objects: Obj[]): Promise<void> {
  const kube = new KubeHttp({ server: c.server, caPem: c.caPem, token: c.adminToken });
  try {
    for (const o of objects) {
      const base = o.apiVersion.includes("/") ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`;
      const ns = o.metadata.namespace ? `/namespaces/${o.metadata.namespace}` : "";
      const path = `${base}${ns}/${ACCOUNT_KINDS[o.kind]}/${o.metadata.name}?fieldManager=berth-cdk8s&fieldValidation=Strict`;
      const r = await kube.raw("PATCH", path, JSON.stringify(o), "application/apply-patch+yaml");
      if (r.status >= 300) throw new Error(`applying ${o.kind} ${o.metadata.name} to ${c.name}: ${r.status} ${r.text}`);
    }
  } finally {
    kube.close();
  }
}

/** A token for exactly the manifests' ServiceAccount (TokenRequest), as a kubeconfig. */
async function tokenFor(c: Cluster, namespace: string, name: string): Promise<Credential> {
  const kube = new KubeHttp({ server: c.server, caPem: c.caPem, token: c.adminToken });
  try {
    const tr = await kube.json<{ status: { token: string; expirationTimestamp: string } }>(
      "POST",
      `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
      { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } },
    );
    const user = `${namespace}:${name}`;
    const kubeconfig = JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: c.name,
          cluster: { server: c.server, "certificate-authority-data": Buffer.from(c.caPem).toString("base64") },
        },
      ],
      users: [{ name: user, user: { token: tr.status.token } }],
      contexts: [{ name: user, context: { cluster: c.name, user } }],
      "current-context": user,
    });
    return {
      serviceAccount: name,
      namespace,
      username: `system:serviceaccount:${namespace}:${name}`,
      token: tr.status.token,
      expiresAt: tr.status.expirationTimestamp,
      kubeconfig,
    };
  } finally {
    kube.close();
  }
}

const CONTROL_PLANE = accountObjects("10-control-plane.yaml");
const GPU_A = accountObjects("20-gpu-gpu-a.yaml");
const SYSTEM = "berth-system";

/** Each account the journey runs with, where, and its grants as the manifests state them. */
const ACCOUNTS: { user: string; cluster: string; rules: RuleList }[] = [
  ["mgmt", CONTROL_PLANE, "berth-api"],
  ["mgmt", CONTROL_PLANE, "berth-worker"],
  ["gpu-a", GPU_A, "berth-operator"],
  ["gpu-a", GPU_A, "berth-control-plane"],
].map(([cluster, objects, name]) => ({
  user: `system:serviceaccount:${SYSTEM}:${name}`,
  cluster: cluster as string,
  rules: rulesOf(objects as Obj[], SYSTEM, name as string),
}));

/**
 * Grants this journey does not exercise, each with the file whose call needs it and that call's text
 * (checked to be in the file: when the call goes, so must the grant). A grant unused here and not listed
 * is a rule to remove, and fails the test.
 */
interface Elsewhere {
  file: string;
  call: string;
  why: string;
}
const account = (name: string) => `system:serviceaccount:${SYSTEM}:${name}`;
const [API, WORKER, OP, CP] = ["berth-api", "berth-worker", "berth-operator", "berth-control-plane"].map(account);
const CLUSTERS = "api/src/domain/clusters/store.ts";
const CATALOG = "api/src/domain/catalog/store.ts";
const POOLS = "api/src/domain/storage/pools.ts";
const VOLUMES = "api/src/domain/storage/volumeParts.ts";
const WALLETS = "api/src/domain/credits/mirror.ts";
const IMPORTS = "api/src/worker/imports.ts";
const DISPATCH = "controllers/src/sessions/dispatch.ts";
const SNAPSHOTS = "api/src/worker/snapshots.ts";
const CLAIMS = "controllers/src/sessions/claims-pass.ts";
const MIRROR = "controllers/src/mirror/reconciler.ts";
const SESSIONS_POLICY = "controllers/src/mirror/policy-keeper.ts";
const STORAGE = "operator/src/storage/reporter.ts";
const catalogList = (kind: string) => ({ file: CATALOG, call: `"GET", path(kind)`, why: `the catalog's ${kind} list` });
const USED_ELSEWHERE: Record<string, Elsewhere> = {
  // The API: cluster administration, catalog administration, storage, wallets, session events.
  [`${API} list clusters.berth.dev`]: { file: CLUSTERS, call: `"GET", clusterPath()`, why: "the clusters list" },
  [`${API} patch clusters.berth.dev`]: {
    file: CLUSTERS,
    call: `"PATCH", clusterPath(id)`,
    why: "a new session domain",
  },
  [`${API} delete clusters.berth.dev`]: { file: CLUSTERS, call: `"DELETE", clusterPath(id)`, why: "deregistration" },
  [`${API} delete secrets in berth-system`]: {
    file: CLUSTERS,
    call: `"DELETE", secretPath(ref.namespace, ref.name)`,
    why: "a deregistered cluster's credential",
  },
  [`${API} list sessions.berth.dev`]: {
    file: VOLUMES,
    call: `"GET", namespacedSessionsPath(row.namespace)`,
    why: "which sessions mount a volume",
  },
  [`${API} list offerings.berth.dev`]: catalogList("offerings"),
  [`${API} list resourcepresets.berth.dev`]: catalogList("presets"),
  [`${API} list images.berth.dev`]: catalogList("images"),
  [`${API} get resourcepolicies.berth.dev`]: { file: CATALOG, call: `"GET", path(kind, name)`, why: "a policy read" },
  ...Object.fromEntries(
    ["offerings", "resourcepresets", "images", "resourcepolicies"].map((r) => [
      `${API} update ${r}.berth.dev`,
      { file: CATALOG, call: `"PUT", path(kind`, why: "catalog administration replaces an entry" },
    ]),
  ),
  [`${API} get pools.berth.dev`]: { file: POOLS, call: `"GET", poolPath(name)`, why: "a pool read" },
  [`${API} create pools.berth.dev`]: { file: POOLS, call: `"POST", poolPath()`, why: "a new pool" },
  [`${API} patch pools.berth.dev`]: { file: POOLS, call: `"PATCH", poolPath(name)`, why: "a pool's settings" },
  [`${API} delete pools.berth.dev`]: { file: POOLS, call: `"DELETE", poolPath(name)`, why: "a pool removed" },
  [`${API} patch pools/status.berth.dev`]: {
    file: "api/src/domain/storage/readings.ts",
    call: "`${poolPath(pool.metadata.name)}/status`",
    why: "an operator's capacity report",
  },
  [`${API} get volumes.berth.dev`]: {
    file: VOLUMES,
    call: `"GET", volumePath(row.namespace, row.cr_name)`,
    why: "a volume read",
  },
  [`${API} list volumes.berth.dev`]: {
    file: "api/src/domain/storage/listVolumes.ts",
    call: `"GET", resourcePath(VolumeKind)`,
    why: "the volumes list",
  },
  [`${API} create volumes.berth.dev`]: {
    file: "api/src/domain/storage/createVolume.ts",
    call: `"POST", volumePath(namespace)`,
    why: "a new volume",
  },
  [`${API} patch volumes.berth.dev`]: {
    file: VOLUMES,
    call: `"PATCH", volumePath(row.namespace, row.cr_name)`,
    why: "a volume resized or marked deleted",
  },
  [`${API} delete images.berth.dev`]: {
    file: "api/src/domain/images/privateImages.ts",
    call: `"DELETE", imagePath(id)`,
    why: "a member deletes their private image",
  },
  [`${API} list events`]: {
    file: "api/src/domain/sessions/inspectResource.ts",
    call: "/events`",
    why: "a session's Kubernetes events",
  },
  [`${API} get wallets.berth.dev`]: { file: WALLETS, call: `"GET", walletPath(ns, name)`, why: "a wallet read" },
  [`${API} patch wallets.berth.dev`]: {
    file: WALLETS,
    call: `"PATCH", walletPath(ns, name)`,
    why: "a wallet's limits",
  },
  // The worker: billing, imports, volumes' lifecycle, reclaim.
  [`${WORKER} delete sessions.berth.dev`]: {
    file: "controllers/src/sessions/reconciler.ts",
    call: "sessionPath(s.metadata.namespace as string, s.metadata.name as string)",
    why: "a terminated session's resource after its retention",
  },
  [`${WORKER} patch sessions/status.berth.dev`]: {
    file: "api/src/domain/reclaim/watch.ts",
    call: 'sessionPath(s.metadata.namespace as string, s.metadata.name as string, "status")',
    why: "the reclaim loop's idle mark",
  },
  [`${WORKER} get sessions.berth.dev`]: {
    file: "api/src/domain/sessions/lookup.ts",
    call: `kube.request("GET", sessionPath(row.namespace, row.cr_name))`,
    why: "a system pause (idle, time limit, out of credits) reads the resource first",
  },
  [`${WORKER} patch sessions.berth.dev`]: {
    file: "api/src/domain/sessions/pauseForSystem.ts",
    call: `"PATCH", sessionPath(row.namespace, row.cr_name)`,
    why: "billing pauses a session out of credits",
  },
  [`${WORKER} patch volumes/status.berth.dev`]: {
    file: CLAIMS,
    call: "this.#volumePath(vol), {",
    why: "where a volume's claim is",
  },
  [`${WORKER} delete volumes.berth.dev`]: {
    file: CLAIMS,
    call: `management.request("DELETE", path)`,
    why: "a deleted volume after its grace period",
  },
  // Billing reads an offering's rate when a charge falls due, which the journey may not reach.
  [`${WORKER} get offerings.berth.dev`]: {
    file: "api/src/domain/credits/context.ts",
    call: "await catalog.offering(name)",
    why: "billing reads an offering's rate",
  },
  [`${WORKER} list resourcepolicies.berth.dev`]: {
    file: "api/src/domain/sessions/runtime.ts",
    call: `"GET", resourcePath(k)`,
    why: "the reclaim loop's idle rules",
  },
  [`${WORKER} get images.berth.dev`]: {
    file: IMPORTS,
    call: "getObject(this.#kube, kind, name)",
    why: "an import retried",
  },
  [`${WORKER} create images.berth.dev`]: {
    file: IMPORTS,
    call: "createObject(this.#kube, kind, body)",
    why: "an import",
  },
  [`${WORKER} update images.berth.dev`]: { file: IMPORTS, call: `"PUT", imagePath(name)`, why: "an import retried" },
  [`${WORKER} delete images.berth.dev`]: { file: IMPORTS, call: `"DELETE", imagePath(name)`, why: "a failed import" },
  [`${WORKER} patch wallets.berth.dev`]: { file: WALLETS, call: `"PATCH", walletPath(ns, name)`, why: "billing" },
  // The control plane on a GPU cluster: node administration, logs, volumes.
  [`${CP} list nodes`]: {
    file: "api/src/domain/clusters/probe.ts",
    call: "`/api/v1/nodes?${q}`",
    why: "the registration probe's GPU-node fallback",
  },
  [`${CP} delete nodes`]: {
    file: "api/src/domain/clusters/nodeActions.ts",
    call: `"DELETE", \`/api/v1/nodes/`,
    why: "an administrator deletes a node",
  },
  [`${CP} get pods/log in berth-sessions`]: {
    file: "api/src/domain/logs/podLog.ts",
    call: "/pods/${seg(r.pod)}/log?",
    why: "a session's logs",
  },
  [`${CP} create sessionmirrors.berth.dev in berth-sessions`]: {
    file: DISPATCH,
    call: "serverSideApply<SessionMirror>(kube, this.#path(name)",
    why: "a server-side apply that makes the mirror is also authorized as a create (not in the audit log)",
  },
  [`${CP} list persistentvolumes`]: { file: CLAIMS, call: `"/api/v1/persistentvolumes"`, why: "a volume purged" },
  [`${CP} patch persistentvolumes`]: {
    file: CLAIMS,
    call: "`/api/v1/persistentvolumes/${pv.metadata.name}`",
    why: "a purged volume's PVs handed back to the driver",
  },
  [`${CP} get persistentvolumeclaims in berth-sessions`]: {
    file: CLAIMS,
    call: `"GET", path`,
    why: "a released claim, until it is gone",
  },
  [`${CP} delete persistentvolumeclaims in berth-sessions`]: {
    file: CLAIMS,
    call: "/persistentvolumeclaims/${claim}`",
    why: "a claim no session used for a while",
  },
  [`${CP} create persistentvolumeclaims in berth-sessions`]: {
    file: SNAPSHOTS,
    call: `"POST", this.#claimPath()`,
    why: "a snapshot of a volume with no claim, and a restored volume's first claim",
  },
  [`${CP} get volumesnapshots.snapshot.storage.k8s.io in berth-sessions`]: {
    file: SNAPSHOTS,
    call: `"GET", this.#snapshotPath(s.k8s_name)`,
    why: "a snapshot being made, read until the cluster's controller says ready",
  },
  [`${CP} create volumesnapshots.snapshot.storage.k8s.io in berth-sessions`]: {
    file: SNAPSHOTS,
    call: `"POST", this.#snapshotPath()`,
    why: "a member snapshots a volume",
  },
  [`${CP} delete volumesnapshots.snapshot.storage.k8s.io in berth-sessions`]: {
    file: SNAPSHOTS,
    call: `"DELETE", this.#snapshotPath(s.k8s_name)`,
    why: "a member deletes a snapshot",
  },
  // The operator.
  [`${OP} get nodes`]: {
    file: MIRROR,
    call: "`/api/v1/nodes/${encodeURIComponent(name)}`",
    why: "whether a vanished pod's node is gone (nodeAbsent)",
  },
  [`${OP} update sessionmirrors/finalizers.berth.dev in berth-sessions`]: {
    file: "controllers/src/mirror/manifests.ts",
    call: "blockOwnerDeletion: true",
    why: "owner references with blockOwnerDeletion where OwnerReferencesPermissionEnforcement is on (not on the bed)",
  },
  [`${OP} update networkpolicies.networking.k8s.io in berth-sessions`]: {
    file: SESSIONS_POLICY,
    call: `"PUT", \`\${policyPath}/\${SESSIONS_POLICY_NAME}\``,
    why: "the sessions policy is rewritten when someone edits it",
  },
  [`${OP} delete networkpolicies.networking.k8s.io in berth-sessions`]: {
    file: MIRROR,
    call: "/networkpolicies/${a.name}`",
    why: "the deleteNetworkPolicy action",
  },
  // Called on every run, but timing decides whether the journey sees it: the policy is read only when the
  // informer has not synced yet; a mirror's status is patched only when it differs from the last report.
  [`${OP} get networkpolicies.networking.k8s.io in berth-sessions`]: {
    file: SESSIONS_POLICY,
    call: `"GET", \`\${policyPath}/\${SESSIONS_POLICY_NAME}\``,
    why: "readPolicy before the first list",
  },
  [`${OP} patch sessionmirrors/status.berth.dev in berth-sessions`]: {
    file: MIRROR,
    call: 'resourcePath(SessionMirrorKind, { namespace: ns, name: m.metadata.name, subresource: "status" })',
    why: "the mirror status write in reconcile",
  },
  // This journey mounts no volume; the storage journey (e2e/src/storage) makes and reads claims.
  [`${OP} get persistentvolumeclaims in berth-sessions`]: {
    file: MIRROR,
    call: "/persistentvolumeclaims/${v.claimName}`",
    why: "a session's claim is read until it binds",
  },
  [`${OP} create persistentvolumeclaims in berth-sessions`]: {
    file: MIRROR,
    call: "`/api/v1/namespaces/${ns}/persistentvolumeclaims`",
    why: "a session's claim is made where it lands",
  },
  [`${OP} list csistoragecapacities.storage.k8s.io`]: {
    file: STORAGE,
    call: `"/apis/storage.k8s.io/v1/csistoragecapacities"`,
    why: "the volume sync tick reads the driver's capacity",
  },
  [`${OP} get nodes/proxy`]: {
    file: STORAGE,
    call: "/proxy/stats/summary`",
    why: "the volume sync tick reads the kubelet's stats of nodes whose pods mount a volume",
  },
};

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

let bed: SessionsBed;
beforeAll(async () => {
  bed = await startSessionsBed({
    fleet: FLEET,
    operatorUsageIntervalMs: 1_000,
    accounts: {
      async management(mgmt) {
        await applyAccounts(mgmt, CONTROL_PLANE);
        return { api: await tokenFor(mgmt, SYSTEM, "berth-api"), worker: await tokenFor(mgmt, SYSTEM, "berth-worker") };
      },
      async gpu(c) {
        await applyAccounts(c, GPU_A);
        return {
          operator: await tokenFor(c, SYSTEM, "berth-operator"),
          controlPlane: await tokenFor(c, SYSTEM, "berth-control-plane"),
        };
      },
    },
  });
});
afterAll(async () => {
  await bed?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface AuditEvent {
  stage: string;
  verb: string;
  user: { username: string };
  objectRef?: { apiGroup?: string; resource?: string; subresource?: string; namespace?: string };
  responseStatus?: { code?: number };
  requestURI: string;
}

function audited(cluster: string): AuditEvent[] {
  return readFileSync(join(dir, `${cluster}.log`), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEvent);
}

const requestOf = (e: AuditEvent): AuditedRequest | undefined =>
  e.objectRef?.resource
    ? {
        verb: e.verb,
        group: e.objectRef.apiGroup ?? "",
        resource: e.objectRef.subresource ? `${e.objectRef.resource}/${e.objectRef.subresource}` : e.objectRef.resource,
        ...(e.objectRef.namespace ? { namespace: e.objectRef.namespace } : {}),
      }
    : undefined;

/** Requests of Berth's accounts the apiservers refused (403). */
function refusedRequests(): string[] {
  return ACCOUNTS.flatMap((acct) =>
    audited(acct.cluster)
      .filter((e) => e.user.username === acct.user && e.responseStatus?.code === 403)
      .map((e) => `${acct.user}: ${e.verb} ${e.requestURI}`),
  );
}

const h100 = { offering: "h100", preset: "gpu-small", image: "jupyterlab" };

describe("least privilege", () => {
  it("the journey needs every grant Berth's accounts hold, and no request is refused", async () => {
    const started = performance.now();
    try {
      const alice = bedApi(bed, bed.alice);
      const a = (await alice.call("createSession", { body: h100 })).id;
      await bed.waitFor(bed.alice, a, (s) => s.phase === "Running", "Running");
      // A pause, resume or terminate the API refuses throws: each is accepted (202, the contract's only success).
      await alice.call("pauseSession", { params: { sessionId: a } });
      await bed.waitFor(bed.alice, a, (s) => s.phase === "Paused", "Paused");
      await alice.call("resumeSession", { params: { sessionId: a } });
      const running = await bed.waitFor(bed.alice, a, (s) => s.phase === "Running", "Running again");
      // Usage reports: one sample per second per session pod. A run-duration, not a wait for an event:
      // the audited journey includes a few rounds of metering.
      await new Promise((r) => setTimeout(r, 3_000));
      const drained = await bedApi(bed, bed.superAdmin).call("drainNode", {
        params: { clusterId: bed.gpu["gpu-a"]?.id as string, nodeName: running.node },
        body: {},
      });
      expect(drained.evictions, JSON.stringify(drained)).toEqual([expect.objectContaining({ result: "evicted" })]);
      // The evicted pod goes; the session starts again on the other node, often before a poll of the
      // session sees it leave Running (and its `message` can lag behind its `node`): watch the pods instead.
      const drainedNode = running.node as string;
      for (let i = 0; ; i++) {
        const pods = await bed.pods("gpu-a");
        if (!pods.some((p) => p.node === drainedNode && !p.deleting)) break;
        if (i > 600) throw new Error(`a session pod stays on the drained node: ${JSON.stringify(pods)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      await alice.call("terminateSession", { params: { sessionId: a } });
      await bed.waitFor(bed.alice, a, (s) => s.phase === "Terminated", "Terminated");
    } catch (e) {
      // A missing rule usually shows first as a journey that stalls: name the refused requests with it.
      throw new Error(`${(e as Error).message}\nrefused: ${JSON.stringify(refusedRequests())}`, { cause: e });
    }
    const journeyMs = performance.now() - started;

    const report: string[] = [`journey: ${(journeyMs / 1000).toFixed(1)} s`];
    const refused = refusedRequests();
    const removable: string[] = [];
    for (const acct of ACCOUNTS) {
      const events = audited(acct.cluster).filter((e) => e.user.username === acct.user);
      const requests = events.flatMap((e) => requestOf(e) ?? []);
      const grants = [...new Map(grantsOf(acct.rules).map((g) => [grantKey(g), g])).values()];
      const unused = grants.filter((g) => !requests.some((r) => allows(g, r))).map(grantKey);
      const unexplained = unused.filter((k) => !USED_ELSEWHERE[`${acct.user} ${k}`]);
      removable.push(...unexplained.map((k) => `${acct.user} ${k}`));
      report.push(
        `${acct.user}: ${grants.length} grants, ${grants.length - unused.length} used by the journey, ` +
          `${unused.length - unexplained.length} needed elsewhere, ${unexplained.length} unused: ${unexplained.join("; ")}`,
      );
    }
    // BERTH_RBAC_REPORT=<file>: the counts for the record (bench-style figures, not asserted).
    if (process.env.BERTH_RBAC_REPORT) writeFileSync(process.env.BERTH_RBAC_REPORT, `${report.join("\n")}\n`);
    expect(refused, report.join("\n")).toEqual([]);
    expect(removable, report.join("\n")).toEqual([]);
  });

  it("names, for each grant the journey leaves unused, a call the code still makes", () => {
    const held = new Set(ACCOUNTS.flatMap((a) => grantsOf(a.rules).map((g) => `${a.user} ${grantKey(g)}`)));
    const stale = Object.keys(USED_ELSEWHERE).filter((k) => !held.has(k));
    expect(stale, "entries for grants no account holds").toEqual([]);
    const missing = Object.entries(USED_ELSEWHERE)
      .filter(([, e]) => !readFileSync(join(ROOT, e.file), "utf8").includes(e.call))
      .map(([k, e]) => `${k}: ${e.file} no longer makes ${e.call}`);
    expect(missing).toEqual([]);
  });
});
