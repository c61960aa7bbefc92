// biome-ignore-all lint/suspicious/noExplicitAny: manifests and the apiserver's JSON as they come
// Berth installed on the bed as a platform team installs it (`npm run bed:install`, docs/deploy.md): its
// own image built by the project's builder (cdk8s/src/image/build.ts) and pushed to the bed's registry
// with Postgres's (cdk8s/src/image/postgres.ts), the `bed` environment's manifests applied with kubectl,
// and the API, worker, operator, gateway and Postgres running as pods the real node's kubelet pulls.
//
// One bed cluster is both the management and the GPU cluster: the real node's kube-proxy and kube-router
// are the host's, one such node per host (docs/dev/real-node-network.md). The node is untainted (the
// manifests tolerate no bed taint) and the only one; the bed's CSI driver gives the StatefulSets their
// volumes. The GPU cluster is registered through the installed API as docs/deploy.md says: the bootstrap
// administrator (its password from the API's log, changed at first sign-in), the control plane's account
// token, then the GPU chart synthesised again with the id the registration answers.
//
// A wrong option is reported in one line naming it (InstallError, checks.ts), not left as a failing pod: images are
// looked up in the registry before anything is applied, Secrets the pods name are checked once the
// install has made its own, and a pod that cannot pull or start while the install waits ends the wait.
import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  BED_GPU_CLUSTER,
  BED_REGISTRY,
  BED_STORAGE_CLASS,
  ENVIRONMENTS,
  type Environment,
} from "@berth/cdk8s/environments";
import { buildPostgresImage } from "@berth/cdk8s/image/postgres";
import { parseRef, pushLayout } from "@berth/cdk8s/image/push";
import { stringify } from "yaml";
import { apiAs } from "../api-client.ts";
import { type RunningCsiHostpath, startCsiHostpath } from "../testbed/csi-hostpath.ts";
import { startFleet } from "../testbed/fleet.ts";
import { KubeHttp } from "../testbed/kube.ts";
import { findMetricsServerBinary } from "../testbed/metrics-server.ts";
import {
  canRunRealNode,
  type Leftovers,
  leftovers,
  nodeLayout,
  pushFileImage,
  type RealNode,
  startRealNode,
} from "../testbed/real-node/index.ts";
import { type LocalRegistry, startRegistry } from "../testbed/registry.ts";
import type { Fleet } from "../testbed/types.ts";
import { checkImages, checkSecrets, NS } from "./checks.ts";
import { headRelease, type Release } from "./release.ts";
import { rolledOut } from "./rollout.ts";

const run = promisify(execFile);
export const BED_CLUSTER = "bed";
export const BED_NODE = "bed-real-1";

/** What an install leaves on the host once stopped: its node's processes, mounts, links and cgroups, and KUBE- chains. */
export interface InstallLeftovers {
  node: Leftovers;
  kubeChains: string[];
}

/** Nothing: what `stopInstall` must answer. */
export const NOTHING_LEFT: InstallLeftovers = {
  node: { processes: [], mounts: [], links: [], cgroups: [] },
  kubeChains: [],
};

/**
 * Stops an install (none when its start failed) and answers what it left on the host, for the install
 * tests' tear-down to compare with NOTHING_LEFT.
 */
export async function stopInstall(install: BedInstall | undefined): Promise<InstallLeftovers | undefined> {
  if (!install) return undefined;
  await install.stop();
  return {
    node: leftovers(nodeLayout(BED_NODE)),
    kubeChains: execFileSync("iptables-save", { encoding: "utf8" })
      .split("\n")
      .filter((l) => l.includes("KUBE-")),
  };
}
const ADMIN_EMAIL = "admin@berth.local";

export interface BedInstall {
  fleet: Fleet;
  node: RealNode;
  registry: LocalRegistry;
  kube: KubeHttp;
  kubeconfigPath: string;
  /** The API's Service (ClusterIP), which this host reaches through kube-proxy's rules. */
  apiUrl: string;
  consoleUrl: string;
  clusterId: string;
  /** The bootstrap administrator, its password changed. */
  admin: { email: string; password: string; token: string };
  /** The version installed (HEAD's by default); applyRelease moves it. */
  release: Release;
  /** Seconds per step. */
  timings: Record<string, number>;
  stop(): Promise<void>;
}

export interface BedInstallOptions {
  /** Default the committed `bed` environment (cdk8s/src/environments.ts). */
  environment?: Environment;
  /** The version installed: default this checkout's (headRelease of the environment). */
  release?: Release;
  log?: (line: string) => void;
  /** Per wait (a rollout, a pod); default 300 s. */
  timeoutMs?: number;
  /** Aborted (Ctrl-C during the install): the next step or wait stops, and everything started is removed. */
  signal?: AbortSignal;
}

/** kubectl apply --server-side of these objects, one field manager per chart (the charts share a Namespace). */
async function apply(kubeconfig: string, dir: string, name: string, objs: unknown[]) {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, objs.map((o) => stringify(o, { lineWidth: 0 })).join("---\n"));
  await run("kubectl", [
    "--kubeconfig",
    kubeconfig,
    "apply",
    "--server-side",
    "--force-conflicts",
    `--field-manager=berth-${name}`,
    "-f",
    file,
  ]);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A chart's objects by its file's prefix ("00-", "10-", "20-"). */
const chartIn = (charts: { file: string; objs: any[] }[], prefix: string) =>
  charts.find((c) => c.file.startsWith(prefix))?.objs ?? [];

/**
 * docs/deploy.md's upgrade on the bed: `release`'s image pushed (the layout `image` when already built) and
 * its manifests applied over the install's with kubectl's server-side apply, the same field managers as the
 * install's, the GPU chart with the registered cluster id. Returns once applied; the rolling updates go on.
 */
export async function applyRelease(
  install: BedInstall,
  release: Release,
  o: { image?: Promise<string>; log?: (line: string) => void } = {},
): Promise<void> {
  const log = o.log ?? (() => {});
  const work = mkdtempSync(join(tmpdir(), "berth-bed-release-"));
  try {
    const layout = await (o.image ?? release.buildImage(join(work, "berth-oci"), log));
    const pushed = await pushLayout(layout, parseRef(`${install.registry.host}/berth:${release.tag}`), {
      plainHttp: true,
    });
    log(`[release] pushed ${install.registry.host}/berth:${release.tag}@${pushed.digest} (${release.name})`);
    const charts = release.charts(install.clusterId);
    const kc = install.kubeconfigPath;
    await apply(kc, work, "crds", chartIn(charts, "00-"));
    await apply(kc, work, "control-plane", chartIn(charts, "10-"));
    const gpu = charts.find((c) => c.file.startsWith("20-"));
    if (gpu) await apply(kc, work, gpu.file.replace(/^20-|\.yaml$/g, ""), gpu.objs);
    install.release = release;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export async function installOnTheBed(o: BedInstallOptions = {}): Promise<BedInstall> {
  const env = o.environment ?? (ENVIRONMENTS.bed as Environment);
  const release = o.release ?? headRelease(env);
  const log = o.log ?? (() => {});
  const timeout = o.timeoutMs ?? 300_000;
  const can = canRunRealNode();
  if (!can.ok) throw new Error(`bed:install needs a real node: ${can.reason}`);
  const timings: Record<string, number> = {};
  const t0 = performance.now();
  let mark = t0;
  const interrupted = () => {
    if (o.signal?.aborted) throw new Error("interrupted: removing what was started");
  };
  const step = (name: string) => {
    interrupted();
    const now = performance.now();
    timings[name] = (now - mark) / 1000;
    mark = now;
    log(`[install] ${name}: ${timings[name].toFixed(1)} s`);
  };
  const work = mkdtempSync(join(tmpdir(), "berth-bed-install-"));
  let fleet: Fleet | undefined;
  let registry: LocalRegistry | undefined;
  let node: RealNode | undefined;
  let csi: RunningCsiHostpath | undefined;
  let kube: KubeHttp | undefined;
  const stop = async () => {
    kube?.close();
    await csi?.stop().catch(() => {});
    await node?.stop();
    await Promise.all([registry?.stop(), fleet?.stop()]);
    rmSync(work, { recursive: true, force: true });
  };
  try {
    // The charts first: an option refused at synth stops here, before anything runs.
    const charts = release.charts();
    const chartOf = (prefix: string) => chartIn(charts, prefix);
    const gpuName = Object.keys(env.gpuClusters)[0] ?? BED_GPU_CLUSTER;

    // The Berth image builds (in a child process) while the bed starts.
    const berthBuild = release.buildImage(join(work, "berth-oci"), log);
    [fleet, registry] = await Promise.all([
      startFleet({
        clusters: [{ name: BED_CLUSTER, kind: "gpu", nodes: [], gpuRuntimeClass: true, gpuDevicePlugin: true }],
      }),
      startRegistry({ name: "bed-install", port: Number(BED_REGISTRY.split(":")[1]) }),
    ]);
    const cluster = fleet.cluster(BED_CLUSTER);
    kube = new KubeHttp({ server: cluster.server, caPem: cluster.caPem, token: cluster.adminToken });
    step("bed and registry");
    node = await startRealNode({
      cluster,
      name: BED_NODE,
      gpuModel: "NVIDIA-L4",
      gpuCount: 2,
      registries: [registry.host],
      services: true,
      networkPolicy: true,
      taint: false,
      log,
    });
    csi = await startCsiHostpath({
      cluster,
      nodeName: node.name,
      kubeletRootDir: node.layout.kubeletRoot,
      dir: join(node.layout.base, "csi-hostpath"),
      storageClass: BED_STORAGE_CLASS,
    });
    step("real node (kubelet, containerd, kube-proxy, CoreDNS, kube-router, CSI driver)");

    const host = registry.host;
    const berth = await pushLayout(await berthBuild, parseRef(`${host}/berth:${release.tag}`), { plainHttp: true });
    const pg = buildPostgresImage({ quiet: true });
    await pushLayout(pg.dir, parseRef(`${host}/berth/postgres:bed`), { plainHttp: true });
    await pushFileImage(registry.url, "berth/victoria-metrics", "bed", {
      files: [{ path: "victoria-metrics-prod", content: findMetricsServerBinary() }],
      entrypoint: ["/victoria-metrics-prod"],
    });
    log(
      `[install] pushed ${host}/berth:${release.tag}@${berth.digest} (${release.name}) and ${host}/berth/postgres:bed (${pg.cached ? "cached" : "built"})`,
    );
    step("images built and pushed");

    await checkImages(
      env,
      charts.flatMap((c) => c.objs),
    );
    const kc = cluster.kubeconfigPath;
    await apply(kc, work, "crds", chartOf("00-"));
    await run("kubectl", ["--kubeconfig", kc, "wait", "--for=condition=Established", "--timeout=120s", "crd", "--all"]);
    await apply(kc, work, "control-plane", chartOf("10-"));
    await apply(kc, work, `gpu-${gpuName}`, chartOf("20-"));

    // The Secrets a platform team makes (docs/deploy.md), where absent; an external database's is theirs.
    const secret = async (name: string, data: Record<string, string>) => {
      const path = `/api/v1/namespaces/${NS}/secrets/${name}`;
      const got = await kube?.raw("GET", path);
      if (got?.status === 200) return;
      await kube?.json("POST", `/api/v1/namespaces/${NS}/secrets`, { metadata: { name }, stringData: data });
    };
    const cp = env.controlPlane;
    if (cp.database.inCluster) {
      const pw = randomBytes(18).toString("hex");
      await secret(cp.database.inCluster.secretName ?? "berth-postgres-app", {
        password: pw,
        uri: `postgres://berth:${pw}@berth-postgres.${NS}.svc:5432/berth`,
      });
    }
    await secret(cp.api.secretName ?? "berth-api", {
      "jwt-secret": randomBytes(32).toString("hex"),
      "webhook-secret-keys": `k1:${randomBytes(32).toString("base64")}`,
    });
    const gpu = env.gpuClusters[gpuName];
    if (gpu) await secret(gpu.gateway.cookieKeySecretName, { keys: randomBytes(32).toString("hex") });
    const operatorTokenSecret = gpu?.operatorTokenSecretName ?? "berth-operator-token";
    await checkSecrets(env, kube);
    step("manifests applied");

    const waitRollout = (kind: "deployments" | "statefulsets", name: string) =>
      rolledOut(kube as KubeHttp, env, kind, name, { timeoutMs: timeout, interrupted });
    await waitRollout("statefulsets", "berth-postgres");
    await Promise.all([waitRollout("deployments", "berth-api"), waitRollout("deployments", "berth-worker")]);
    step("Postgres, API (2) and worker (2) ready");

    const svc = await kube.json<any>("GET", `/api/v1/namespaces/${NS}/services/berth-api`);
    const apiUrl = `http://${svc.spec.clusterIP}:${svc.spec.ports[0].port}`;
    const admin = await signInBootstrapAdmin(kube, apiUrl, timeout);

    // The control plane's account on the GPU cluster (its chart made it), then the registration.
    const cpToken = await until(
      async () => {
        const s = await kube?.json<any>("GET", `/api/v1/namespaces/${NS}/secrets/berth-control-plane-token`);
        return s.data?.token ? Buffer.from(s.data.token, "base64").toString() : undefined;
      },
      60_000,
      "berth-control-plane-token filled",
    );
    const asAdmin = apiAs(apiUrl, admin.token);
    const reg = await asAdmin
      .call("registerCluster", {
        body: {
          name: gpuName,
          session_domain: gpu?.gateway.sessionDomain as string,
          credential: { server: "https://kubernetes.default.svc", ca_data: cluster.caPem, token: cpToken },
        },
      })
      .catch((e: unknown) => {
        throw new Error(`registering ${gpuName}: ${(e as Error).message}`, { cause: e });
      });
    const clusterId = reg.cluster.id;
    await kube.json("POST", `/api/v1/namespaces/${NS}/secrets`, {
      metadata: { name: operatorTokenSecret },
      stringData: { token: reg.operator_token.token },
    });
    // deploy.md: the id goes into the environment's clusterId, synthesised and applied again.
    await apply(kc, work, `gpu-${gpuName}`, chartIn(release.charts(clusterId), "20-"));
    step(`GPU cluster registered (${clusterId})`);
    await Promise.all([waitRollout("deployments", "berth-operator"), waitRollout("deployments", "berth-gateway")]);
    await waitRollout("statefulsets", "berth-metrics");
    step("operator, gateway and metrics ready");
    // Not ready for a researcher until the operator has reported its nodes: before that, a session of any
    // GPU model is refused 422 gpu_model_unavailable.
    const inventory = await until(
      async () => {
        const c = await asAdmin.call("getCluster", { params: { clusterId } }).catch(() => undefined);
        return (c?.inventory?.gpus ?? 0) > 0 ? c?.inventory : undefined;
      },
      180_000,
      "the GPU cluster's first report of its GPUs",
    );
    step(`GPU cluster reports ${inventory.gpus} GPUs on ${inventory.nodes} node(s)`);
    timings.total = (performance.now() - t0) / 1000;
    return {
      fleet,
      node,
      registry,
      kube,
      kubeconfigPath: kc,
      apiUrl,
      consoleUrl: `${apiUrl}/`,
      clusterId,
      admin,
      release,
      timings,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

async function until<T>(f: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`);
    await sleep(1000);
  }
}

/** The generated password from the API pod that made the administrator (its log), then changed. */
async function signInBootstrapAdmin(kube: KubeHttp, apiUrl: string, timeoutMs: number) {
  const generated = await until(
    async () => {
      const pods = await kube.json<any>(
        "GET",
        `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent("app.kubernetes.io/name=berth-api")}`,
      );
      for (const p of pods.items) {
        const l = await kube.raw("GET", `/api/v1/namespaces/${NS}/pods/${p.metadata.name}/log`);
        const m = /password:\s+(\S+)/.exec(l.text);
        if (m) return m[1];
      }
      return undefined;
    },
    timeoutMs,
    "the bootstrap administrator's password in an API pod's log",
  );
  const first = await apiAs(apiUrl, "")
    .call("login", { body: { email: ADMIN_EMAIL, password: generated as string } })
    .catch((e: unknown) => {
      throw new Error(`signing in the bootstrap administrator: ${(e as Error).message}`, { cause: e });
    });
  const password = randomBytes(12).toString("hex");
  const changed = await apiAs(apiUrl, first.access_token)
    .call("changePassword", { body: { current_password: generated as string, new_password: password } })
    .catch((e: unknown) => {
      throw new Error(`changing the administrator's password: ${(e as Error).message}`, { cause: e });
    });
  return { email: ADMIN_EMAIL, password, token: changed.access_token };
}
