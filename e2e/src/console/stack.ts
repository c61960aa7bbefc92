// What a console journey runs against: real Postgres (a fresh database), the real API process serving
// the built console, and, for the session journeys, the local fleet with the worker and the operators
// (e2e/src/sessions/harness.ts) plus each GPU cluster's gateway (startSessionGateways). Every piece is
// the other workspaces' own start function.

import { type RunningApi, startApi } from "@berth/api";
import {
  createTestDatabase,
  type IdentityTestApi,
  installDefaultCatalog,
  startIdentityTestApi,
  type TestDatabase,
  type TestUser,
  testConfig,
} from "@berth/api/testing";
import { ensureConsoleBuilt } from "@berth/console";
import { HttpKube } from "@berth/controllers/kube";
import { loadCrds } from "@berth/crds/manifests";
import { type RunningGateway, selfSignedCertificate } from "@berth/operator/gateway";
import { type RunningStandin, startStandin } from "@berth/operator/standin";
import { ApiextensionsV1Api } from "@kubernetes/client-node";
import { bedApi } from "../api-client.ts";
import { realPodCidrsOf, startClusterGateway } from "../connect/local-gateways.ts";
import { type Fleet, kubeConfigFrom, startFleet } from "../index.ts";
import type { SessionsBed } from "../sessions/harness.ts";

export const ADMIN_EMAIL = "admin@berth.local";
export const ADMIN_FIRST_PASSWORD = "first-admin-password-1";

export interface ConsoleStack {
  url: string;
  api: RunningApi;
  db: TestDatabase;
  stop(): Promise<void>;
}

export async function startConsoleStack(env: Record<string, string> = {}): Promise<ConsoleStack> {
  ensureConsoleBuilt({ log: (l) => console.log(l) });
  const db = await createTestDatabase({ migrate: false });
  let api: RunningApi | undefined;
  try {
    api = await startApi({
      config: testConfig({
        DATABASE_URL: db.url,
        BERTH_BOOTSTRAP_EMAIL: ADMIN_EMAIL,
        BERTH_BOOTSTRAP_PASSWORD: ADMIN_FIRST_PASSWORD,
        BERTH_LOG_LEVEL: "warn",
        ...env,
      }),
    });
  } catch (err) {
    await db.drop();
    throw err;
  }
  const running = api;
  return {
    url: running.url,
    api: running,
    db,
    async stop() {
      await running.stop();
      await db.drop();
    },
  };
}

/** The catalog journeys' ground: a management cluster with Berth's CRDs and default catalog, and an API
 * (real Postgres) whose credential writes there. */
export interface CatalogStack {
  fleet: Fleet;
  kube: HttpKube;
  t: IdentityTestApi;
  stop(): Promise<void>;
}

export async function startCatalogStack(): Promise<CatalogStack> {
  ensureConsoleBuilt();
  const fleet = await startFleet({ clusters: [{ name: "mgmt", kind: "management" }] });
  const kc = kubeConfigFrom(fleet.cluster("mgmt").kubeconfig);
  const kube = new HttpKube(kc);
  let t: IdentityTestApi | undefined;
  const stop = async () => {
    await t?.stop();
    kube.close();
    await fleet.stop();
  };
  try {
    const ext = kc.makeApiClient(ApiextensionsV1Api);
    for (const crd of loadCrds()) await ext.createCustomResourceDefinition({ body: crd as never });
    await installDefaultCatalog(kube);
    t = await startIdentityTestApi({ kubeConfig: kc, clusters: true });
  } catch (err) {
    await stop();
    throw err;
  }
  return { fleet, kube, t, stop };
}

/** An organization's people: the platform's administrator, Acme Research's administrator and Alice, a
 * member of its project Vision. */
export async function acmeResearch(t: IdentityTestApi) {
  const superAdmin: TestUser = await t.aUser({ superAdmin: true, email: `root-${Date.now()}@acme.test` });
  const org = await t.anOrganization("Acme Research");
  const project = await t.aProject(org.id, "Vision");
  const admin = await t.aUser({ email: `admin-${Date.now()}@acme.test` });
  const alice = await t.aUser({ email: `alice-${Date.now()}@acme.test` });
  await t.member(admin, org.id, null, "org_admin");
  await t.member(alice, org.id, project.id, "member");
  return { superAdmin, admin, alice, org, project };
}

/** Each GPU cluster's session gateway on loopback with the stand-in application behind it. */
export interface SessionGateways {
  /** By GPU cluster name (gpu-a, gpu-b). */
  byCluster: Map<string, RunningGateway>;
  /** Each gateway's certificate (PEM), for clients that are told to trust it. */
  certs: Map<string, string>;
  standin: RunningStandin;
  stop(): Promise<void>;
}

/**
 * The real per-cluster gateway (operator/src/gateway) for every GPU cluster of the bed: it verifies connect
 * tokens with the bed's internal plane using the cluster's operator token, asks the cluster whether the
 * session's pod runs, and proxies to the stand-in. Each cluster's `session_domain` is pointed at its
 * gateway, so the links the API hands out open there. Port 0 and a fresh certificate per run: nothing is
 * left listening after stop(), also when start fails half-way.
 */
export async function startSessionGateways(
  bed: SessionsBed,
  opts: { activityIntervalMs?: number } = {},
): Promise<SessionGateways> {
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => {});
  };
  try {
    const standin = await startStandin({ name: "the console journeys" });
    stops.push(() => standin.close());
    const byCluster = new Map<string, RunningGateway>();
    const certs = new Map<string, string>();
    for (const g of Object.values(bed.gpu)) {
      const c = g.cluster;
      const tls = selfSignedCertificate({ names: ["127.0.0.1", "localhost"] });
      certs.set(g.name, tls.certPem);
      const gateway = await startClusterGateway({
        clusterId: g.id,
        cluster: c,
        internalUrl: bed.plane.url,
        tokenFile: g.tokenFile,
        standinPort: standin.port,
        tls,
        host: "127.0.0.1",
        port: 0,
        verifyTimeoutMs: 3000,
        podCacheTtlMs: 200,
        upstreamConnectTimeoutMs: 2000,
        realPodCidrs: realPodCidrsOf(bed.fleet, g.name),
        ...(opts.activityIntervalMs ? { activityIntervalMs: opts.activityIntervalMs } : {}),
      });
      stops.push(() => gateway.close());
      byCluster.set(g.name, gateway);
      await bedApi(bed, bed.superAdmin)
        .call("updateCluster", { params: { clusterId: g.id }, body: { session_domain: `127.0.0.1:${gateway.port}` } })
        .catch((e: Error) => {
          throw new Error(`session_domain of ${g.name}: ${e.message}`);
        });
    }
    return { byCluster, certs, standin, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
