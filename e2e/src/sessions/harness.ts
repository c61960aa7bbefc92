// biome-ignore-all lint/suspicious/noExplicitAny: journeys read the API's JSON as it comes
// The whole session path on the bed, as real processes and real clients: a management cluster and two
// GPU clusters (kwok nodes with nvidia.com/gpu), Postgres, the API over HTTP with real users, the GPU
// clusters registered through the API, the internal plane open on loopback, one operator per GPU cluster
// (least-privilege credentials, as its install makes them) and the leader-elected worker. Journeys use
// only the REST API, the SSE stream and what they can see in the clusters.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  connect,
  makeClusterClients,
  parseSecretKeys,
  startWorker as startApiWorker,
  type WebhookWorkerOptions,
} from "@berth/api";
import { apiRbac, workerRbac } from "@berth/api/rbac";
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
import { ResourcePolicyKind, resourcePath } from "@berth/crds";
import { loadCrds } from "@berth/crds/manifests";
import type { KubeConfig } from "@kubernetes/client-node";
import pino from "pino";
import { bedApi } from "../api-client.ts";
import { mintControlPlaneCredential } from "../clusters/credentials.ts";
import {
  type Cluster,
  type Credential,
  type Fleet,
  type FleetDescription,
  kubeConfigFrom,
  startFleet,
} from "../index.ts";
import { explainSession } from "./explain.ts";
import { adminKube, SESSIONS_NS, SMALL_FLEET, SYSTEM_NS } from "./fleet.ts";
import { type BedOperatorOptions, type GpuClusterHandle, joinGpuCluster } from "./gpu-cluster.ts";
import { ensureOperatorNamespaces } from "./operator-install.ts";

// The package's sessions entry (@berth/e2e/sessions): journeys and benches take the fleet's names and the
// event stream from here with the bed.
export { openEventStream } from "./event-stream.ts";
export { adminKube, gpuCluster, H100, L4, MANAGEMENT, SESSIONS_NS, SMALL_FLEET, SYSTEM_NS } from "./fleet.ts";
export type { GpuClusterHandle } from "./gpu-cluster.ts";

type ResourcePolicySpecInput = Parameters<typeof ResourcePolicyKind.build>[1];

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

export interface SessionsBedOptions extends BedOperatorOptions {
  fleet?: FleetDescription;
  worker?: Partial<SessionControllerOptions>;
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
  /** More of the API's environment (e.g. BERTH_METRICS_SERVER_URL). */
  apiEnv?: Record<string, string>;
  /** More of it from the started fleet (e.g. an address on a real node's bridge), before the API starts. */
  apiEnvFrom?: (fleet: Fleet) => Promise<Record<string, string>>;
  /** The worker's imports and builds loops, with the API's images configuration (BERTH_REGISTRY_URL). */
  workerImages?: boolean;
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
      const h = await joinGpuCluster({
        cluster: c,
        dir,
        apiUrl: t.api.url,
        superAdminToken: superAdmin.token,
        planeUrl: plane.url,
        log,
        operator: opts,
        ...(given ? { given } : {}),
      });
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
              `timed out waiting for ${what}; last: ${JSON.stringify(last).slice(0, 1500)}; on the clusters: ${await explainSession(t.database.db, Object.values(gpu), id)}`,
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
