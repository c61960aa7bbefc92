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
// A wrong option is reported in one line naming it (InstallError), not left as a failing pod: images are
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
  synthEnvironment,
} from "@berth/cdk8s/environments";
import { buildPostgresImage } from "@berth/cdk8s/image/postgres";
import { parseRef, pushLayout } from "@berth/cdk8s/image/push";
import { ensureConsoleBuilt } from "@berth/console";
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

const run = promisify(execFile);
const ROOT = new URL("../../../", import.meta.url).pathname;
const NS = "berth-system";
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

/** A wrong option or a missing Secret, said in one line that names the option. */
export class InstallError extends Error {
  readonly option: string;
  constructor(option: string, problem: string) {
    super(`${option}: ${problem}`);
    this.name = "InstallError";
    this.option = option;
  }
}

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

/**
 * A version of Berth as the bed installs it: its image and its manifests for the `bed` environment. HEAD's
 * is synthesised here (headRelease); an earlier commit's comes from that commit (release.ts).
 */
export interface Release {
  /** For logs: "HEAD", a commit. */
  name: string;
  /** Its image's tag in the bed's registry. */
  tag: string;
  /** Builds its image as an OCI layout (into `dir` or a cache of its own) and says where the layout is. */
  buildImage(dir: string, log: (line: string) => void): Promise<string>;
  /** Its manifests, file by file (00-crds, 10-control-plane, 20-gpu-…), the GPU chart carrying `clusterId`. */
  charts(clusterId?: string): { file: string; objs: any[] }[];
}

/** This checkout's version: the image cdk8s/src/image/build.ts makes here and `env` synthesised. */
export function headRelease(env: Environment = ENVIRONMENTS.bed as Environment): Release {
  return {
    name: "HEAD",
    tag: "bed",
    async buildImage(dir, log) {
      // The image carries console/dist when it exists (cdk8s/src/image/build.ts).
      const c = ensureConsoleBuilt({ log });
      if (c.built) log(`[install] console built in ${(c.ms / 1000).toFixed(1)} s`);
      await run(process.execPath, [join(ROOT, "cdk8s/src/image/build.ts"), dir, "--tag", "bed"], {
        maxBuffer: 2 ** 24,
      });
      return dir;
    },
    charts(clusterId) {
      const gpuName = Object.keys(env.gpuClusters)[0] ?? BED_GPU_CLUSTER;
      const gpu = env.gpuClusters[gpuName];
      const withId: Environment =
        clusterId && gpu ? { ...env, gpuClusters: { ...env.gpuClusters, [gpuName]: { ...gpu, clusterId } } } : env;
      return synthEnvironment(withId).map(({ file, chart }) => ({ file, objs: chart.toJson() as any[] }));
    },
  };
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

/** Option paths in `env` whose value is `v` (`controlPlane.image.image`, …). */
export function optionsNaming(env: unknown, v: string, at = ""): string[] {
  if (env === v) return [at];
  if (!env || typeof env !== "object") return [];
  return Object.entries(env).flatMap(([k, x]) => optionsNaming(x, v, at ? `${at}.${k}` : k));
}

const podTemplates = (objs: any[]) =>
  objs
    .filter((o) => ["Deployment", "StatefulSet"].includes(o.kind))
    .map((o) => ({ owner: o, spec: o.spec.template.spec }));

/** Every Secret the pod templates name (env and volumes), with where. */
export function secretsNamed(objs: any[]): { secret: string; where: string }[] {
  const out: { secret: string; where: string }[] = [];
  for (const { owner, spec } of podTemplates(objs)) {
    const where = `${owner.kind} ${owner.metadata.name}`;
    for (const v of spec.volumes ?? []) if (v.secret) out.push({ secret: v.secret.secretName, where });
    for (const c of spec.containers)
      for (const e of c.env ?? [])
        if (e.valueFrom?.secretKeyRef)
          out.push({ secret: e.valueFrom.secretKeyRef.name, where: `${where} (${e.name})` });
  }
  return out;
}

const imagesNamed = (objs: any[]) => [
  ...new Set(podTemplates(objs).flatMap(({ spec }) => spec.containers.map((c: any) => c.image as string))),
];

/** An option naming `value`, else the fallback; for InstallError. */
const optionFor = (env: Environment, value: string, fallback: string) => {
  const found = optionsNaming(env, value);
  return found.length ? found.join(", ") : fallback;
};

async function manifestExists(ref: string): Promise<string | undefined> {
  let r: ReturnType<typeof parseRef>;
  try {
    r = parseRef(ref);
  } catch (e) {
    return (e as Error).message;
  }
  let res: Response;
  try {
    res = await fetch(`http://${r.host}/v2/${r.repository}/manifests/${r.tag}`, {
      method: "HEAD",
      headers: { accept: "application/vnd.oci.image.manifest.v1+json,application/vnd.oci.image.index.v1+json" },
    });
  } catch (e) {
    return `the registry ${r.host} does not answer (${(e as Error).message})`;
  }
  return res.ok ? undefined : `${ref} is not in the registry (${res.status})`;
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

/** The first reason a pod of these labels cannot start, or undefined. */
function stuck(pod: any): { reason: string; message: string; image: string } | undefined {
  for (const s of pod.status?.containerStatuses ?? []) {
    const w = s.state?.waiting;
    if (w && ["ErrImagePull", "ImagePullBackOff", "CreateContainerConfigError", "InvalidImageName"].includes(w.reason))
      return { reason: w.reason, message: w.message ?? "", image: s.image };
    if (w?.reason === "CrashLoopBackOff")
      return { reason: w.reason, message: s.lastState?.terminated?.reason ?? "", image: s.image };
  }
  return undefined;
}

/** Every image the environment's pods name is in the registry it names (the node pulls from there). */
export async function checkImages(env: Environment, objs?: any[]): Promise<void> {
  objs ??= synthEnvironment(env).flatMap(({ chart }) => chart.toJson() as any[]);
  for (const image of imagesNamed(objs)) {
    const problem = await manifestExists(image);
    if (problem) throw new InstallError(optionFor(env, image, `the image ${image}`), `cannot be pulled: ${problem}`);
  }
}

/**
 * Every Secret the control plane's pods name exists (after the install has made its own): a missing one
 * would leave its pods waiting in CreateContainerConfigError. The operator's token comes later.
 */
export async function checkSecrets(env: Environment, kube: KubeHttp): Promise<void> {
  const cp = synthEnvironment(env)
    .find((c) => c.file.startsWith("10-"))
    ?.chart.toJson() as any[];
  for (const { secret: s, where } of secretsNamed(cp)) {
    const got = await kube.raw("GET", `/api/v1/namespaces/${NS}/secrets/${s}`);
    if (got.status === 404)
      throw new InstallError(
        optionFor(env, s, `the Secret ${s}`),
        `the Secret ${NS}/${s} does not exist (named by ${where}); make it first (docs/deploy.md)`,
      );
  }
}

/** How long a pod may stay unschedulable before a rollout's wait gives up on it. */
const UNSCHEDULABLE_MS = 120_000;

/** A chart's objects by its file's prefix ("00-", "10-", "20-"). */
const chartIn = (charts: { file: string; objs: any[] }[], prefix: string) =>
  charts.find((c) => c.file.startsWith(prefix))?.objs ?? [];

/**
 * Resolves once the Deployment or StatefulSet has rolled out its current template: every replica updated
 * and Ready, none of an older revision left. A pod that cannot pull or start ends the wait (InstallError
 * naming the option); a crash loop is waited on a while (a process waiting for Postgres restarts a few times).
 */
export async function rolledOut(
  kube: KubeHttp,
  env: Environment,
  kind: "deployments" | "statefulsets",
  name: string,
  o: { timeoutMs: number; interrupted?: () => void },
): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    o.interrupted?.();
    const d = await kube.json<any>("GET", `/apis/apps/v1/namespaces/${NS}/${kind}/${name}`);
    const want = d.spec.replicas ?? 1;
    const st = d.status ?? {};
    const ok =
      (st.observedGeneration ?? 0) >= d.metadata.generation &&
      (st.readyReplicas ?? 0) >= want &&
      (st.updatedReplicas ?? 0) >= want &&
      (st.replicas ?? 0) <= want;
    if (ok) return;
    const sel = Object.entries(d.spec.selector.matchLabels)
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
    const pods = await kube.json<any>("GET", `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(sel)}`);
    for (const p of pods.items) {
      // A pod no node can take (a rolling update's extra pod on a full node) will not start by waiting.
      const unschedulable = p.status?.conditions?.find(
        (c: any) => c.type === "PodScheduled" && c.status === "False" && c.reason === "Unschedulable",
      );
      if (unschedulable && Date.now() - Date.parse(unschedulable.lastTransitionTime) > UNSCHEDULABLE_MS)
        throw new Error(`${kind.slice(0, -1)} ${name}: pod ${p.metadata.name} unschedulable: ${unschedulable.message}`);
      const s = stuck(p);
      if (!s) continue;
      const missing = /secret "([^"]+)" not found/.exec(s.message)?.[1];
      if (missing)
        throw new InstallError(
          optionFor(env, missing, `the Secret ${missing}`),
          `the Secret ${NS}/${missing} does not exist (pod ${p.metadata.name})`,
        );
      if (s.reason !== "CrashLoopBackOff")
        throw new InstallError(
          optionFor(env, s.image, `the image ${s.image}`),
          `${s.reason} on pod ${p.metadata.name}: ${s.message.split("\n")[0]}`,
        );
      // A process that waits for another (the API for Postgres) restarts a few times on a first install.
      const restarts = p.status.containerStatuses?.[0]?.restartCount ?? 0;
      if (restarts < 6 && Date.now() < deadline) continue;
      const logs = await kube.raw("GET", `/api/v1/namespaces/${NS}/pods/${p.metadata.name}/log?previous=true`);
      throw new Error(
        `${kind.slice(0, -1)} ${name}: pod ${p.metadata.name} crashes (${restarts} restarts): ${
          logs.text
            .split("\n")
            .filter((l) => l.trim() && !/^\s+at /.test(l))
            .at(-1) ?? ""
        }`,
      );
    }
    if (Date.now() > deadline)
      throw new Error(`${kind.slice(0, -1)} ${name} not ready in ${o.timeoutMs / 1000} s: ${JSON.stringify(d.status)}`);
    await sleep(1000);
  }
}

/** Berth's Deployments and StatefulSets on the bed, each rolled out (rolledOut). */
export async function allRolledOut(install: BedInstall, env: Environment, timeoutMs: number): Promise<void> {
  await Promise.all([
    ...["berth-api", "berth-worker", "berth-operator", "berth-gateway"].map((n) =>
      rolledOut(install.kube, env, "deployments", n, { timeoutMs }),
    ),
    ...["berth-postgres", "berth-metrics"].map((n) => rolledOut(install.kube, env, "statefulsets", n, { timeoutMs })),
  ]);
}

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
