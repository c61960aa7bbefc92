// biome-ignore-all lint/suspicious/noExplicitAny: journeys read the API's JSON as it comes
// The whole session path on the bed, as real processes and real clients: a management cluster and two
// GPU clusters (kwok nodes with nvidia.com/gpu), Postgres, the API over HTTP with real users, the GPU
// clusters registered through the API, the internal plane open on loopback, one operator per GPU cluster
// (least-privilege credentials, as its install makes them) and the leader-elected worker. Journeys use
// only the REST API, the SSE stream and what they can see in the clusters.

import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  connect,
  makeClusterClients,
  parseSecretKeys,
  startWorker as startApiWorker,
  type WebhookWorkerOptions,
} from "@berth/api";
import { apiRbac, controlPlaneRbac, workerRbac } from "@berth/api/rbac";
import {
  createClustersRuntime,
  grantToOrganization,
  type IdentityTestApi,
  type InternalListener,
  installDefaultCatalog,
  startIdentityTestApi,
  startInternalListener,
  TEST_WEBHOOK_SECRET_KEYS,
  TestClock,
  type TestUser,
} from "@berth/api/testing";
import { ApiError, type BodyOf } from "@berth/console/client";
import type { RunningWorker, SessionControllerOptions } from "@berth/controllers";
import { HttpKube } from "@berth/controllers/kube";
import { LABELS, ResourcePolicyKind, resourcePath, SessionMirrorKind } from "@berth/crds";
import { loadCrds } from "@berth/crds/manifests";
import { operatorRbac, parseConfig, type RunningOperator, startOperator } from "@berth/operator";
import type { KubeConfig } from "@kubernetes/client-node";
import pino from "pino";
import { apiAs, bedApi } from "../api-client.ts";
import { mintControlPlaneCredential } from "../clusters/credentials.ts";
import {
  type Cluster,
  type ClusterDescription,
  type Credential,
  type Fleet,
  type FleetDescription,
  type GpuNodeDescription,
  KubeHttp,
  kubeConfigFrom,
  startFleet,
} from "../index.ts";

type ResourcePolicySpecInput = Parameters<typeof ResourcePolicyKind.build>[1];

export const H100 = "NVIDIA-H100-80GB-HBM3";
export const L4 = "NVIDIA-L4";
export const SESSIONS_NS = "berth-sessions";
export const SYSTEM_NS = "berth-system";

/** A fleet's management cluster. */
export const MANAGEMENT: ClusterDescription = { name: "mgmt", kind: "management" };

/**
 * A GPU cluster as the journeys run one: the `nvidia` RuntimeClass and a device plugin, HAMi's when a node
 * carries a sharing layer.
 */
export function gpuCluster(name: string, nodes: GpuNodeDescription[]): ClusterDescription {
  return {
    name,
    kind: "gpu",
    nodes,
    gpuRuntimeClass: true,
    gpuDevicePlugin: nodes.some((n) => n.sharing === "hami") ? "hami" : true,
  };
}

export const SMALL_FLEET: FleetDescription = {
  clusters: [
    MANAGEMENT,
    gpuCluster("gpu-a", [{ name: "gpu-a-1", gpuModel: H100, gpuCount: 2 }]),
    gpuCluster("gpu-b", [{ name: "gpu-b-1", gpuModel: L4, gpuCount: 2 }]),
  ],
};

export const adminKube = (c: Cluster) => new KubeHttp({ server: c.server, caPem: c.caPem, token: c.adminToken });

/**
 * How the bed makes Berth's Kubernetes credentials. Default: minted from the code's rule lists
 * (@berth/api/rbac, operatorRbac()). A test may hand in others, e.g. the accounts of the cdk8s manifests.
 */
export interface BedAccounts {
  /** The API's and the worker's credentials in the management cluster. */
  management(mgmt: Cluster): Promise<{ api: Credential; worker: Credential }>;
  /** On a GPU cluster (its CRD and namespaces installed): the operator's, and the one registered for the control plane. */
  gpu(c: Cluster): Promise<{ operator: Credential; controlPlane: Credential }>;
}

/** What an operator's install does on its GPU cluster: namespaces, the mirror CRD, a least-privilege account. */
export async function installOperator(c: Cluster, dir: string, operatorCredential?: Credential): Promise<string> {
  const admin = adminKube(c);
  try {
    const crd = loadCrds().find((x) => x.metadata.name === SessionMirrorKind.crdName);
    await admin.ensure("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    await ensureOperatorNamespaces(admin);
    const path = join(dir, `operator-${c.name}.kubeconfig`);
    if (operatorCredential) {
      await waitForMirrorCrd(admin, c.name);
      writeFileSync(path, operatorCredential.kubeconfig);
      return path;
    }
    const rbac = operatorRbac();
    const system = rbac.namespaceRules.find((n) => n.namespace === SYSTEM_NS);
    const cred = await c.mintCredential({
      name: "berth-operator",
      namespace: SYSTEM_NS,
      clusterRules: rbac.clusterRules,
      rules: system?.rules ?? [],
    });
    for (const { namespace, rules } of rbac.namespaceRules.filter((n) => n.namespace !== SYSTEM_NS)) {
      const r = "/apis/rbac.authorization.k8s.io/v1";
      await admin.ensure(`${r}/namespaces/${namespace}/roles`, {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: "berth-operator" },
        rules,
      });
      await admin.ensure(`${r}/namespaces/${namespace}/rolebindings`, {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "berth-operator" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "berth-operator" },
        subjects: [{ kind: "ServiceAccount", name: cred.serviceAccount, namespace: cred.namespace }],
      });
    }
    await waitForMirrorCrd(admin, c.name);
    writeFileSync(path, cred.kubeconfig);
    return path;
  } finally {
    admin.close();
  }
}

async function ensureOperatorNamespaces(admin: KubeHttp): Promise<void> {
  for (const ns of [SYSTEM_NS, SESSIONS_NS]) {
    const labels = ns === SESSIONS_NS ? { "pod-security.kubernetes.io/enforce": "restricted" } : {};
    await admin.ensure("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: ns, labels } });
  }
}

async function waitForMirrorCrd(admin: KubeHttp, cluster: string): Promise<void> {
  for (let i = 0; ; i++) {
    const res = await admin.raw("GET", resourcePath(SessionMirrorKind, { namespace: SESSIONS_NS }));
    if (res.status === 200) return;
    if (i > 100) throw new Error(`the SessionMirror CRD is never served on ${cluster}: ${res.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface GpuClusterHandle {
  name: string;
  id: string;
  cluster: Cluster;
  tokenFile: string;
  kubeconfigPath: string;
  operator: RunningOperator | undefined;
  /** Starts (again) this cluster's operator. */
  startOperator(identity?: string): Promise<RunningOperator>;
}

export interface SessionsBed {
  fleet: Fleet;
  t: IdentityTestApi;
  superAdmin: TestUser;
  /** An organization with an admin and two members. */
  org: { id: string };
  orgAdmin: TestUser;
  alice: TestUser;
  bob: TestUser;
  gpu: Record<string, GpuClusterHandle>;
  plane: InternalListener;
  worker: RunningWorker;
  startWorker(identity?: string): Promise<RunningWorker>;
  /** The worker's own credential (least privilege), for loops a test runs itself. */
  workerKubeConfig: KubeConfig;
  /** The workers' Postgres pool. */
  workerDb: ReturnType<typeof connect>;
  dir: string;
  /** Polls a session's detail until `pred` holds. */
  waitFor(user: TestUser, id: string, pred: (s: any) => boolean, what: string, timeoutMs?: number): Promise<any>;
  /** Creates a session (the create must be accepted) and waits until it is Running; its detail then. */
  startRunning(user: TestUser, body: Record<string, unknown>, timeoutMs?: number): Promise<any>;
  /**
   * Writes a ResourcePolicy of the bed's organization as an administrator's kubectl would (the bed's API
   * credential has no catalog writes; the policy routes are the catalog tests').
   */
  writeOrganizationPolicy(name: string, spec: Omit<ResourcePolicySpecInput, "scope">): Promise<void>;
  /** Session pods on a GPU cluster (name → phase, node), terminating ones included (`deleting`). */
  pods(
    cluster: string,
  ): Promise<
    { name: string; phase: string; node?: string; deleting: boolean; uid: string; labels: Record<string, string> }[]
  >;
  stop(): Promise<void>;
}

export interface SessionsBedOptions {
  fleet?: FleetDescription;
  worker?: Partial<SessionControllerOptions>;
  /** Operators' inventory resync (a heartbeat); default 2 s so that a silent cluster shows within the test. */
  operatorResyncMs?: number;
  /** Operators' inventory debounce; default 50 ms (tests), production 500 ms. */
  operatorDebounceMs?: number;
  /** Operators' usage interval (one sample per session pod and interval); default 60 s, as in production. */
  operatorUsageIntervalMs?: number;
  /** Operators' volume-sync tick (storage capacity reports); default 30 s, as in production. */
  operatorStorageIntervalMs?: number;
  /** Operators' GPU metrics source (a DCGM exporter's metrics URL, scraped every `intervalMs`); default none. */
  operatorGpuMetrics?: { url: string; intervalMs: number };
  /** The worker's lease timings; default short (3 s) so that failover tests are quick. */
  workerLease?: { durationMs: number; renewDeadlineMs: number; retryPeriodMs: number };
  /** The worker's webhook dispatcher (allowlist, receivers' CA); default: on, nothing internal admitted. */
  workerWebhooks?: WebhookWorkerOptions;
  /** The worker's reclaim loop (idle auto-pause, time limits); `false` leaves it to the test. Default on. */
  workerReclaim?: false | { intervalMs?: number };
  /** How soon the worker reads a kept cluster credential again (a Secret rewritten in place); default 5 min. */
  workerCredentialRecheckMs?: number;
  /** How long the worker's placement keeps fair share's decayed usage; default 30 s (0: read at every pass). */
  workerFairShareUsageTtlMs?: number;
  /** The worker's fair-share reclaim loop (docs/dev/fair-share.md); `false` leaves it to the test. Default on. */
  workerCapacityReclaim?: false | { intervalMs?: number };
  /** The worker's snapshot loop (api/src/worker/snapshots.ts); `false` leaves it to the test. Default on, every 5 s. */
  workerSnapshots?: false | { intervalMs?: number };
  /**
   * Starts the real nodes the fleet description names (e2e/src/testbed/real-node), pulling from these
   * registries over plain HTTP. Default: kwok only.
   */
  realNodes?: { registries: readonly string[] };
  /** How long a started session app may take to become Ready before its session fails; default 10 min. */
  operatorAppReadyTimeoutMs?: number;
  /** Operators' idle-rule probe interval (notebook and GPU signals); default 30 s, as in production. */
  operatorActivityIntervalMs?: number;
  /** More of the API's environment (e.g. BERTH_METRICS_SERVER_URL). */
  apiEnv?: Record<string, string>;
  /** More of it from the started fleet (e.g. an address on a real node's bridge), before the API starts. */
  apiEnvFrom?: (fleet: Fleet) => Promise<Record<string, string>>;
  /** The worker's imports and builds loops, with the API's images configuration (BERTH_REGISTRY_URL). */
  workerImages?: boolean;
  /** Image builds on these clusters' operators (BERTH_OPERATOR_BUILDS_*), by cluster name. */
  operatorBuilds?: Record<string, { namespace: string; nodeSelector: string }>;
  /**
   * Berth's credentials; default: minted from the rule lists. Given, the API also installs the default
   * catalog with its own credential, as it does at start (api/src/bootstrap).
   */
  accounts?: BedAccounts;
}

export async function startSessionsBed(opts: SessionsBedOptions = {}): Promise<SessionsBed> {
  const fleet = await startFleet(
    opts.fleet ?? SMALL_FLEET,
    opts.realNodes ? { realNodes: true, realNodeRegistries: opts.realNodes.registries } : {},
  );
  const dir = mkdtempSync(join(tmpdir(), "berth-sessions-bed-"));
  const stops: (() => Promise<void>)[] = [
    async () => fleet.stop(),
    async () => rmSync(dir, { recursive: true, force: true }),
  ];
  const stopAll = async () => {
    for (const s of stops.reverse()) await s().catch(() => {});
  };
  try {
    const mgmt = fleet.clusters.find((c) => c.kind === "management") as Cluster;
    const admin = adminKube(mgmt);
    for (const crd of loadCrds()) await admin.ensure("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    await admin.ensure("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: SYSTEM_NS } });
    admin.close();
    const { api: apiCred, worker: workerCred } = opts.accounts
      ? await opts.accounts.management(mgmt)
      : {
          // The API's whole grant, as an install gives it (the catalog's writes included).
          api: await mintControlPlaneCredential(mgmt, { name: "berth-api", rbac: apiRbac() }),
          worker: await mintControlPlaneCredential(mgmt, { name: "berth-worker", rbac: workerRbac() }),
        };
    const catalogKube = new HttpKube(kubeConfigFrom(opts.accounts ? apiCred.kubeconfig : mgmt.kubeconfig));
    try {
      await installDefaultCatalog(catalogKube);
    } finally {
      catalogKube.close();
    }
    const apiEnv = { ...opts.apiEnv, ...(await opts.apiEnvFrom?.(fleet)) };
    const t = await startIdentityTestApi({
      kubeConfig: kubeConfigFrom(apiCred.kubeconfig),
      ...(Object.keys(apiEnv).length > 0 ? { env: apiEnv } : {}),
    });
    stops.push(() => t.stop());
    // Real time: operators' reports and the worker's "is this cluster reporting" compare wall clocks.
    t.deps.clock = { now: () => new Date() };
    t.deps.log = pino({ level: process.env.BERTH_TEST_LOG ?? "silent" });
    t.deps.clusters = await createClustersRuntime({
      clients: makeClusterClients(kubeConfigFrom(apiCred.kubeconfig)),
      db: t.database.db,
      clock: new TestClock(new Date()),
      log: t.deps.log,
      options: { probeTimeoutMs: 10_000 },
    });
    const plane = (await startInternalListener(t.deps, {
      allowCidrs: ["127.0.0.0/8"],
      host: "127.0.0.1",
      port: 0,
    })) as InternalListener;
    stops.push(() => plane.close());

    const superAdmin = await t.aUser({ superAdmin: true });
    const orgRow = await t.anOrganization("Acme");
    // Starting a session needs credits for a minimum run (billing): the organization gets 1,000.
    await grantToOrganization(t.database.db, {
      organizationId: orgRow.id,
      amount: 1_000_000_000n,
      actorKind: "system",
      actorId: null,
      reason: "test bed",
      at: new Date(),
    });
    const [orgAdmin, alice, bob] = await Promise.all([t.aUser(), t.aUser(), t.aUser()]);
    await t.member(orgAdmin, orgRow.id, null, "org_admin");
    await t.member(alice, orgRow.id, null, "member");
    await t.member(bob, orgRow.id, null, "member");

    const log = pino({ level: process.env.BERTH_TEST_LOG ?? "silent" });
    const gpu: Record<string, GpuClusterHandle> = {};
    for (const c of fleet.clusters.filter((x) => x.kind === "gpu")) {
      const given = opts.accounts ? await givenGpuAccounts(opts.accounts, c) : undefined;
      const kubeconfigPath = await installOperator(c, dir, given?.operator);
      const cpCred =
        given?.controlPlane ??
        (await mintControlPlaneCredential(c, { name: "berth-control-plane", rbac: controlPlaneRbac() }));
      const registered = await apiAs(t.api.url, superAdmin.token)
        .call("registerCluster", {
          body: {
            name: c.name,
            session_domain: `${c.name}.sessions.localhost`,
            credential: { server: c.server, ca_data: c.caPem, token: cpCred.token },
          },
        })
        .catch((e: unknown) => {
          throw new Error(`registering ${c.name}: ${(e as Error).message}`, { cause: e });
        });
      const tokenFile = join(dir, `token-${c.name}`);
      writeFileSync(`${tokenFile}.new`, registered.operator_token.token);
      renameSync(`${tokenFile}.new`, tokenFile);
      const h: GpuClusterHandle = {
        name: c.name,
        id: registered.cluster.id,
        cluster: c,
        tokenFile,
        kubeconfigPath,
        operator: undefined,
        async startOperator(identity = `${c.name}-op-${Math.random().toString(36).slice(2, 6)}`) {
          const op = await startOperator(
            parseConfig({
              clusterId: h.id,
              kube: { mode: "kubeconfig", path: kubeconfigPath },
              controlPlaneUrl: plane.url,
              tokenFile,
              requestTimeoutMs: 5_000,
              http: { host: "127.0.0.1", port: 0 },
              // Short for quick failovers, with room for a slow renewal on a loaded machine (a 2 s deadline
              // made a standby flap there instead of leading).
              lease: { identity, durationMs: 5_000, renewDeadlineMs: 4_000, retryPeriodMs: 250 },
              inventory: {
                debounceMs: opts.operatorDebounceMs ?? 50,
                resyncMs: opts.operatorResyncMs ?? 2_000,
                listPageSize: 500,
              },
              usage: { intervalMs: opts.operatorUsageIntervalMs ?? 60_000, graceMs: 200 },
              storage: { intervalMs: opts.operatorStorageIntervalMs ?? 30_000 },
              ...(opts.operatorAppReadyTimeoutMs !== undefined
                ? { sessions: { appReadyTimeoutMs: opts.operatorAppReadyTimeoutMs } }
                : {}),
              ...(opts.operatorActivityIntervalMs !== undefined
                ? { activity: { intervalMs: opts.operatorActivityIntervalMs } }
                : {}),
              ...(opts.operatorGpuMetrics
                ? { gpuMetrics: { ...opts.operatorGpuMetrics, timeoutMs: 1_000, retentionMs: 600_000 } }
                : {}),
              ...(opts.operatorBuilds?.[c.name] ? { builds: opts.operatorBuilds[c.name] } : {}),
              backoff: { baseMs: 100, maxMs: 1_000, jitter: 0.5 },
              logLevel: "silent",
            }),
            { log },
          );
          h.operator = op;
          return op;
        },
      };
      gpu[c.name] = h;
      await h.startOperator();
      stops.push(async () => {
        await h.operator?.stop();
      });
    }

    // Ready means placeable: every GPU cluster's inventory is in (its operator's first report).
    const description = opts.fleet ?? SMALL_FLEET;
    for (const c of description.clusters.filter((x) => x.kind === "gpu")) {
      const id = gpu[c.name]?.id as string;
      for (let i = 0; ; i++) {
        const rows = (await t.database
          .db("cluster_nodes")
          .where({ cluster_id: id })
          .count<{ n: string }[]>({ n: "*" })) as { n: string }[];
        const real = opts.realNodes && c.realNode ? 1 : 0;
        if (Number(rows[0]?.n ?? 0) >= (c.nodes?.length ?? 0) + real) break;
        if (i > 600) throw new Error(`the inventory of ${c.name} never arrived`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const workers: RunningWorker[] = [];
    // The workers' own pool, as a separate worker process would have.
    const workerDb = connect(t.database.url, { poolMax: 20 });
    stops.push(() => workerDb.destroy());
    const startWorker = async (identity?: string) => {
      const w = await startApiWorker({
        db: workerDb,
        kubeConfig: kubeConfigFrom(workerCred.kubeconfig),
        log,
        ...(identity ? { identity } : {}),
        lease: opts.workerLease ?? { durationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 250 },
        // The API's keys (testConfig's), so the dispatcher opens the secrets the API sealed.
        webhooks: { ...opts.workerWebhooks, secretKeys: parseSecretKeys(TEST_WEBHOOK_SECRET_KEYS) },
        ...(opts.workerReclaim !== undefined ? { reclaim: opts.workerReclaim } : {}),
        ...(opts.workerCredentialRecheckMs !== undefined
          ? { clusterCredentialRecheckMs: opts.workerCredentialRecheckMs }
          : {}),
        ...(opts.workerCapacityReclaim !== undefined ? { capacityReclaim: opts.workerCapacityReclaim } : {}),
        ...(opts.workerSnapshots !== undefined ? { snapshots: opts.workerSnapshots } : {}),
        ...(opts.workerFairShareUsageTtlMs !== undefined
          ? { fairShareUsageTtlMs: opts.workerFairShareUsageTtlMs }
          : {}),
        ...(opts.workerImages && t.deps.config.images?.registry ? { images: { config: t.deps.config.images } } : {}),
        options: {
          // Silent = three missed heartbeats (status resync 20 s, inventory resync operatorResyncMs).
          reportGraceMs: Math.max(10_000, 3 * Math.min(20_000, opts.operatorResyncMs ?? 2_000)),
          pollMs: 500,
          resyncMs: 10_000,
          timing: {
            terminatedRetentionMs: 3600_000,
            unschedulableMs: 15_000,
            silentClusterGiveUpMs: 60_000,
            recheckMs: 500,
          },
          ...opts.worker,
        },
      });
      workers.push(w);
      return w;
    };
    const worker = await startWorker("worker-1");
    await worker.leading(30_000);
    stops.push(async () => {
      for (const w of workers) await w.stop();
    });

    /**
     * What a session's timeout cannot show from the API: each GPU cluster's mirror and pods of it, and the
     * operators' last reports (the API folds a pending pod's reasons into "waiting for the pod").
     */
    const explain = async (id: string): Promise<string> => {
      const out: Record<string, unknown> = {};
      try {
        out.reports = await t.database
          .db("session_status_reports")
          .where({ session: id })
          .select("cluster_id", "phase", "node", "reason", "message", "observed_generation", "at");
        for (const [name, h] of Object.entries(gpu)) {
          const k = adminKube(h.cluster);
          try {
            const selector = encodeURIComponent(`${LABELS.sessionId}=${id}`);
            const mirrors = await k.json<{ items: any[] }>(
              "GET",
              `${resourcePath(SessionMirrorKind, { namespace: SESSIONS_NS })}?labelSelector=${selector}`,
            );
            const pods = await k.json<{ items: any[] }>(
              "GET",
              `/api/v1/namespaces/${SESSIONS_NS}/pods?labelSelector=${selector}`,
            );
            out[name] = {
              mirrors: mirrors.items.map((m) => ({
                uid: m.metadata.uid,
                revision: m.spec?.revision,
                deleting: m.metadata.deletionTimestamp,
                finalizers: m.metadata.finalizers,
                assignment: m.spec?.resources?.gpuAssignment,
              })),
              pods: pods.items.map((p) => ({
                uid: p.metadata.uid,
                owner: p.metadata.ownerReferences?.[0]?.uid,
                node: p.spec?.nodeName,
                phase: p.status?.phase,
                deleting: p.metadata.deletionTimestamp,
                conditions: p.status?.conditions?.map((c: any) => `${c.type}=${c.status} ${c.reason ?? ""}`),
              })),
            };
          } finally {
            k.close();
          }
        }
      } catch (err) {
        out.error = String(err);
      }
      return JSON.stringify(out);
    };
    const bed: SessionsBed = {
      fleet,
      t,
      superAdmin,
      org: { id: orgRow.id },
      orgAdmin,
      alice,
      bob,
      gpu,
      plane,
      worker,
      startWorker,
      workerKubeConfig: kubeConfigFrom(workerCred.kubeconfig),
      workerDb,
      dir,
      async waitFor(user, id, pred, what, timeoutMs = 30_000) {
        const deadline = Date.now() + timeoutMs;
        let last: unknown;
        for (;;) {
          // A refusal is waited past as before (the last one is shown at the deadline); no answer at all is not.
          const r = await bedApi(bed, user)
            .call("getSession", { params: { sessionId: id } })
            .catch((e: unknown) => (e instanceof ApiError && e.status > 0 ? e : Promise.reject(e)));
          last = r instanceof ApiError ? { status: r.status, code: r.code, message: r.message } : r;
          if (!(r instanceof ApiError) && pred(r)) return r;
          if (Date.now() > deadline)
            throw new Error(
              `timed out waiting for ${what}; last: ${JSON.stringify(last).slice(0, 1500)}; on the clusters: ${await explain(id)}`,
            );
          await new Promise((res) => setTimeout(res, 100));
        }
      },
      async startRunning(user, body, timeoutMs = 120_000) {
        const created = await bedApi(bed, user)
          // Journeys hand in bodies the contract may refuse (the real ones' image names can be missing).
          .call("createSession", { body: body as BodyOf<"createSession"> })
          .catch((e: unknown) => {
            if (e instanceof ApiError) throw new Error(`create answered ${e.status} ${e.code}: ${e.message}`);
            throw e;
          });
        return bed.waitFor(user, created.id, (x) => x.phase === "Running", "Running", timeoutMs);
      },
      async writeOrganizationPolicy(name, spec) {
        const k = adminKube(mgmt);
        try {
          await k.json(
            "POST",
            resourcePath(ResourcePolicyKind),
            ResourcePolicyKind.build({ name }, { scope: { kind: "organization", id: orgRow.id }, ...spec }),
          );
        } finally {
          k.close();
        }
      },
      async pods(cluster) {
        const k = adminKube(fleet.cluster(cluster));
        try {
          const list = await k.json<{ items: any[] }>("GET", `/api/v1/namespaces/${SESSIONS_NS}/pods`);
          return list.items.map((p) => ({
            name: p.metadata.name,
            phase: p.status?.phase,
            node: p.spec?.nodeName,
            deleting: !!p.metadata.deletionTimestamp,
            uid: p.metadata.uid,
            labels: (p.metadata.labels ?? {}) as Record<string, string>,
          }));
        } finally {
          k.close();
        }
      },
      stop: stopAll,
    };
    return bed;
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** A test's GPU-cluster accounts, made after the namespaces they live in. */
async function givenGpuAccounts(accounts: BedAccounts, c: Cluster) {
  const admin = adminKube(c);
  try {
    await ensureOperatorNamespaces(admin);
  } finally {
    admin.close();
  }
  return accounts.gpu(c);
}

/** A minimal SSE reader over fetch (the bearer token cannot go through EventSource). */
export async function openEventStream(url: string, token: string, lastEventId?: string) {
  const ac = new AbortController();
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${token}`, ...(lastEventId ? { "last-event-id": lastEventId } : {}) },
    signal: ac.signal,
  });
  if (res.status !== 200 || !res.body) throw new Error(`stream answered ${res.status}`);
  const events: { id?: string; event: string; data: any }[] = [];
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  const pump = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += decoder.decode(value, { stream: true });
        let i = buf.indexOf("\n\n");
        while (i >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          i = buf.indexOf("\n\n");
          const e: { id?: string; event: string; data: any } = { event: "message", data: undefined };
          for (const line of block.split("\n")) {
            if (line.startsWith("id: ")) e.id = line.slice(4);
            else if (line.startsWith("event: ")) e.event = line.slice(7);
            else if (line.startsWith("data: ")) e.data = JSON.parse(line.slice(6));
          }
          if (e.data !== undefined) events.push(e);
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    events,
    headers: res.headers,
    async waitFor(pred: (e: { id?: string; event: string; data: any }) => boolean, what: string, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = events.find(pred);
        if (hit) return hit;
        if (Date.now() > deadline)
          throw new Error(
            `no event: ${what}; got ${events.map((e) => `${e.event}:${e.data?.session?.phase ?? ""}`).join(", ")}`,
          );
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async close() {
      ac.abort();
      await pump;
    },
  };
}
