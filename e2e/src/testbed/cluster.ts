// One cluster of the bed: etcd, kube-apiserver and kube-controller-manager everywhere; GPU clusters add
// kube-scheduler and kwok (the kubelets) and their GPU nodes. The flags are a set known to work together.
import { generateKeyPair, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { mintCredential } from "./credentials.ts";
import { getText } from "./get-text.ts";
import { createDevicePlugin, createGpuNode, createHamiDevicePlugin, createRuntimeClass, nodeIsReady } from "./gpu.ts";
import { KubeHttp } from "./kube.ts";
import { kubeconfigText } from "./kubeconfig.ts";
import { criLogLines, writeKwokConfig } from "./kwok.ts";
import { freePort, isPortConflict } from "./ports.ts";
import { type ManagedProcess, spawnManaged } from "./process.ts";
import type { Cluster, ClusterDescription, ComponentName, ComponentTiming, GpuNodeDescription } from "./types.ts";

/** A component exited, or did not become ready, while its cluster started. */
export class ComponentStartError extends Error {
  readonly cluster: string;
  readonly component: ComponentName | "nodes-ready";
  readonly logTail: string;
  constructor(
    cluster: string,
    component: ComponentName | "nodes-ready",
    what: string,
    logFile: string,
    logTail: string,
  ) {
    super(`${cluster}/${component} ${what}; last lines of ${logFile}:\n${logTail}`);
    this.name = "ComponentStartError";
    this.cluster = cluster;
    this.component = component;
    this.logTail = logTail;
  }
}

export interface ClusterStartInput {
  desc: ClusterDescription;
  binDir: string;
  dir: string;
  /** performance.now() at the fleet's start, for timings. */
  t0: number;
  log: (line: string) => void;
  podLogLines: readonly string[];
  stopGraceMs: number;
  /** How long one component (or the nodes) may take to become ready. */
  readyTimeoutMs: number;
  signal: AbortSignal;
}

const PORT_ATTEMPTS = 5;
/** Every cluster's Service range (ClusterIPs; the `kubernetes` Service is its first address). */
export const SERVICE_CIDR = "10.96.0.0/24";
// On SIGTERM kube-apiserver stops listening at once but then lingers for seconds while watches drain
// (5 s seen with a controller manager connected). Its state is in etcd, so a SIGKILL after 1 s loses
// nothing and keeps restarts and stops fast.
const APISERVER_GRACE_MS = 1000;

export async function startCluster(input: ClusterStartInput): Promise<Cluster> {
  const { desc, binDir, dir, t0 } = input;
  // Aborted by the fleet (another cluster failed, Ctrl-C) or by a failed branch of this cluster's start:
  // the other branches stop waiting, and nothing is spawned after that.
  const local = new AbortController();
  const onOuterAbort = () => local.abort();
  input.signal.addEventListener("abort", onOuterAbort, { once: true });
  if (input.signal.aborted) local.abort();
  const signal = local.signal;
  const name = desc.name;
  const gpu = desc.kind === "gpu";
  const procs = new Map<ComponentName, ManagedProcess>();
  const timings: ComponentTiming[] = [];
  let kube: KubeHttp | undefined;

  const logs = join(dir, "logs");
  const pki = join(dir, "pki");
  mkdirSync(logs, { recursive: true });
  mkdirSync(pki, { recursive: true });
  const bin = (c: ComponentName) => join(binDir, c);
  const logFile = (c: ComponentName) => join(logs, `${c}.log`);
  const extra = (c: ComponentName) => desc.extraArgs?.[c] ?? [];

  const spawnComponent = (c: ComponentName, args: string[]) => {
    if (signal.aborted) throw new Error(`${name}: start aborted`);
    const p = spawnManaged({
      name: `${name}/${c}`,
      command: bin(c),
      args: [...args, ...extra(c)],
      logFile: logFile(c),
    });
    procs.set(c, p);
    return p;
  };
  const record = (component: ComponentTiming["component"], started: number) => {
    const t: ComponentTiming = {
      cluster: name,
      component,
      startedAtMs: Math.round(started - t0),
      durationMs: Math.round(performance.now() - started),
    };
    timings.push(t);
    input.log(`[testbed] ${name}/${component} ready in ${(t.durationMs / 1000).toFixed(1)}s`);
  };

  // Polls `probe` until it yields a value; fails fast with the log's tail when the process dies.
  const waitReady = async <T>(
    c: ComponentName | "nodes-ready",
    proc: ManagedProcess | undefined,
    probe: () => Promise<T | undefined>,
  ): Promise<T> => {
    const deadline = performance.now() + input.readyTimeoutMs;
    const file = proc?.logFile ?? logFile("kwok");
    for (;;) {
      if (proc?.hasExited()) {
        throw new ComponentStartError(name, c, `exited with ${await proc.exited} during start`, file, proc.tail(20));
      }
      if (signal.aborted) throw new Error(`${name}: start aborted`);
      const v = await probe().catch(() => undefined);
      if (v !== undefined) return v;
      if (performance.now() > deadline) {
        throw new ComponentStartError(
          name,
          c,
          `was not ready after ${input.readyTimeoutMs / 1000}s`,
          file,
          proc?.tail(20) ?? "",
        );
      }
      await sleep(100);
    }
  };

  // Starts a component on fresh ports until one is not taken (another process can grab a free port
  // between our probe and the component's bind).
  const withPorts = async <T>(c: ComponentName, attempt: () => Promise<T>): Promise<T> => {
    for (let i = 1; ; i++) {
      try {
        return await attempt();
      } catch (err) {
        const conflict = err instanceof ComponentStartError && isPortConflict(err.logTail);
        if (!conflict || i >= PORT_ATTEMPTS) throw err;
        input.log(`[testbed] ${name}/${c}: port taken, retrying on another`);
      }
    }
  };

  const stopAll = async () => {
    const grace = input.stopGraceMs;
    const clients = (["kwok", "kube-scheduler", "kube-controller-manager"] as const).map((c) =>
      procs.get(c)?.stop(grace),
    );
    await Promise.all([...clients, procs.get("kube-apiserver")?.stop(Math.min(grace, APISERVER_GRACE_MS))]);
    await procs.get("etcd")?.stop(grace);
    kube?.close();
  };

  try {
    // Credentials: RSA service-account keys and a static admin token.
    const keys = await promisify(generateKeyPair)("rsa", {
      modulusLength: 2048,
      publicKeyEncoding: { type: "spki", format: "pem" },
      privateKeyEncoding: { type: "pkcs8", format: "pem" },
    });
    const saKey = join(pki, "sa.key");
    const saPub = join(pki, "sa.pub");
    writeFileSync(saKey, keys.privateKey, { mode: 0o600 });
    writeFileSync(saPub, keys.publicKey);
    const adminToken = randomBytes(24).toString("hex");
    const tokenFile = join(pki, "tokens.csv");
    writeFileSync(tokenFile, `${adminToken},admin,admin,"system:masters"\n`, { mode: 0o600 });

    // etcd
    const etcdData = join(dir, "etcd");
    let etcdStarted = 0;
    const etcdPort = await withPorts("etcd", async () => {
      rmSync(etcdData, { recursive: true, force: true }); // a failed attempt leaves its peer URL inside
      const [client, peer] = [await freePort(), await freePort()];
      etcdStarted = performance.now();
      const p = spawnComponent("etcd", [
        `--name=${name}`,
        `--data-dir=${etcdData}`,
        `--listen-client-urls=http://127.0.0.1:${client}`,
        `--advertise-client-urls=http://127.0.0.1:${client}`,
        `--listen-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-cluster=${name}=http://127.0.0.1:${peer}`,
        "--unsafe-no-fsync=true",
        "--log-level=warn",
      ]);
      await waitReady("etcd", p, async () =>
        (await getText(`http://127.0.0.1:${client}/health`)).includes('"health":"true"') ? true : undefined,
      );
      return client;
    });
    record("etcd", etcdStarted);

    // kube-apiserver. Its self-signed serving certificate (pki/apiserver.crt) holds the leaf first and
    // its CA second; clients get the CA alone.
    const certFile = join(pki, "apiserver.crt");
    let apiStarted = 0;
    let apiArgs: string[] = [];
    let caPem = "";
    const apiPort = await withPorts("kube-apiserver", async () => {
      const port = await freePort();
      kube?.close();
      kube = undefined;
      apiArgs = [
        `--etcd-servers=http://127.0.0.1:${etcdPort}`,
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        `--secure-port=${port}`,
        `--cert-dir=${pki}`,
        "--endpoint-reconciler-type=none",
        `--service-cluster-ip-range=${SERVICE_CIDR}`,
        "--allow-privileged=true",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        `--service-account-key-file=${saPub}`,
        `--service-account-signing-key-file=${saKey}`,
        `--token-auth-file=${tokenFile}`,
        "--authorization-mode=Node,RBAC",
        "--profiling=false",
      ];
      apiStarted = performance.now();
      const p = spawnComponent("kube-apiserver", apiArgs);
      await waitReady("kube-apiserver", p, async () => {
        if (!caPem) {
          if (!existsSync(certFile)) return undefined;
          caPem = caOnly(readFileSync(certFile, "utf8"));
        }
        const server = `https://127.0.0.1:${port}`;
        kube ??= new KubeHttp({ server, caPem, token: adminToken });
        const res = await kube.raw("GET", "/readyz");
        return res.status === 200 && res.text === "ok" ? true : undefined;
      });
      return port;
    });
    record("kube-apiserver", apiStarted);
    if (!kube) throw new Error("unreachable: apiserver ready without a client");
    const admin: KubeHttp = kube;
    const server = `https://127.0.0.1:${apiPort}`;
    const caFile = join(pki, "ca.crt");
    writeFileSync(caFile, caPem);
    const kubeconfig = kubeconfigText({ cluster: name, server, caPem, user: "admin", token: adminToken });
    const kubeconfigPath = join(dir, "kubeconfig.yaml");
    writeFileSync(kubeconfigPath, kubeconfig, { mode: 0o600 });

    // kube-controller-manager: default service accounts (pods are admitted only then), the not-ready
    // taint, garbage collection, namespace deletion. Trap: --root-ca-file must be the CA alone.
    const kcm = async () => {
      const started = performance.now();
      const p = spawnComponent("kube-controller-manager", [
        `--kubeconfig=${kubeconfigPath}`,
        "--leader-elect=false",
        "--secure-port=0",
        `--service-account-private-key-file=${saKey}`,
        `--root-ca-file=${caFile}`,
        "--controllers=*,-nodeipam,-bootstrapsigner,-tokencleaner",
      ]);
      await waitReady("kube-controller-manager", p, async () =>
        (await admin.raw("GET", "/api/v1/namespaces/default/serviceaccounts/default")).status === 200
          ? true
          : undefined,
      );
      record("kube-controller-manager", started);
    };

    // kube-scheduler at the client rate busy clusters set (at 50 QPS it bounds dispatch at ~55 pods/s).
    // With --secure-port=0 it has no health endpoint: ready is when its log (-v=2) says the node and pod
    // informers are populated.
    const scheduler = async () => {
      const started = performance.now();
      const p = spawnComponent("kube-scheduler", [
        `--kubeconfig=${kubeconfigPath}`,
        "--leader-elect=false",
        "--secure-port=0",
        "--kube-api-qps=500",
        "--kube-api-burst=1000",
        "-v=2",
      ]);
      await waitReady("kube-scheduler", p, async () => {
        const log = readFileSync(p.logFile, "utf8");
        return log.includes('Caches populated" type="*v1.Node"') && log.includes('Caches populated" type="*v1.Pod"')
          ? true
          : undefined;
      });
      record("kube-scheduler", started);
    };

    let kwokPort: number | undefined;
    const podLogFile = join(dir, "pod-log.cri");
    const kwok = async () => {
      await Promise.all([
        ...(desc.gpuRuntimeClass ? [createRuntimeClass(admin)] : []),
        ...(desc.gpuDevicePlugin === "hami"
          ? [createHamiDevicePlugin(admin)]
          : desc.gpuDevicePlugin
            ? [createDevicePlugin(admin)]
            : []),
        ...(desc.nodes ?? []).map((n) => createGpuNode(admin, n)),
      ]);
      writeFileSync(podLogFile, criLogLines(input.podLogLines));
      let started = 0;
      let proc: ManagedProcess | undefined;
      kwokPort = await withPorts("kwok", async () => {
        const port = await freePort();
        const config = join(dir, "kwok.yaml");
        // Any self-signed pair for 127.0.0.1 serves: the apiserver dials kubelets without verifying.
        writeKwokConfig(config, {
          port,
          tlsCertFile: certFile,
          tlsKeyFile: join(pki, "apiserver.key"),
          podLogFile,
          podCidr: "10.0.0.1/16",
        });
        started = performance.now();
        proc = spawnComponent("kwok", [
          `--kubeconfig=${kubeconfigPath}`,
          `--config=${config}`,
          "--node-ip=127.0.0.1",
          `--node-port=${port}`,
          `--server-address=127.0.0.1:${port}`,
          `--tls-cert-file=${certFile}`,
          `--tls-private-key-file=${join(pki, "apiserver.key")}`,
        ]);
        const p = proc;
        await waitReady("kwok", p, async () =>
          (await getText(`https://127.0.0.1:${port}/healthz`, caPem)) === "ok" ? true : undefined,
        );
        return port;
      });
      record("kwok", started);
      const wanted = new Set((desc.nodes ?? []).map((n) => n.name));
      if (wanted.size > 0) {
        await waitReady("nodes-ready", proc, () => nodesReady(admin, wanted));
        record("nodes-ready", started);
      }
    };

    // In parallel; the first failure aborts the others, and all have settled before stopAll runs (so no
    // branch spawns a process after the cleanup).
    const branches = [kcm, ...(gpu ? [scheduler, kwok] : [])].map((b) =>
      b().catch((err: unknown) => {
        local.abort();
        throw err;
      }),
    );
    const failures = (await Promise.allSettled(branches)).flatMap((r) =>
      r.status === "rejected" ? [r.reason as unknown] : [],
    );
    if (failures.length > 0) throw failures.find((f) => f instanceof ComponentStartError) ?? failures[0];
    input.signal.removeEventListener("abort", onOuterAbort);

    const addGpuNode = async (node: GpuNodeDescription) => {
      if (!gpu) throw new Error(`${name} is a management cluster: it has no kwok to run nodes`);
      await createGpuNode(admin, node);
      await waitReady("nodes-ready", procs.get("kwok"), () => nodesReady(admin, new Set([node.name])));
    };

    const restartApiServer = async () => {
      const t = performance.now();
      await procs.get("kube-apiserver")?.stop(Math.min(input.stopGraceMs, APISERVER_GRACE_MS));
      const stopped = performance.now();
      // Same port and etcd; the certificate in pki/ is reused, so clients keep trusting it.
      const p = spawnComponent("kube-apiserver", apiArgs);
      const deadline = performance.now() + input.readyTimeoutMs;
      for (;;) {
        if (p.hasExited())
          throw new ComponentStartError(name, "kube-apiserver", "exited during restart", p.logFile, p.tail(20));
        const res = await admin.raw("GET", "/readyz").catch(() => undefined);
        if (res?.status === 200 && res.text === "ok") {
          const secs = (ms: number) => `${(ms / 1000).toFixed(1)}s`;
          input.log(
            `[testbed] ${name}/kube-apiserver restarted: stopped in ${secs(stopped - t)}, ready ${secs(performance.now() - stopped)} later`,
          );
          return;
        }
        if (performance.now() > deadline)
          throw new ComponentStartError(name, "kube-apiserver", "was not ready after a restart", p.logFile, p.tail(20));
        await sleep(100);
      }
    };

    return {
      name,
      kind: desc.kind,
      server,
      caPem,
      adminToken,
      kubeconfigPath,
      kubeconfig,
      ...(kwokPort === undefined ? {} : { kwokPort, podLogFile }),
      dataDir: dir,
      timings,
      mintCredential: (opts) => mintCredential({ kube: admin, cluster: name, server, caPem }, opts),
      addGpuNode,
      restartApiServer,
      pids: () => [...procs.values()].filter((p) => !p.hasExited()).map((p) => p.pid),
      stop: stopAll,
    };
  } catch (err) {
    input.signal.removeEventListener("abort", onOuterAbort);
    await stopAll();
    throw err;
  }
}

/** The second PEM block of the apiserver's self-signed bundle (the CA); the first is the serving leaf. */
export function caOnly(bundle: string): string {
  const blocks = bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g) ?? [];
  const ca = blocks[1] ?? blocks[0];
  if (!ca) throw new Error("apiserver.crt holds no certificate");
  return ca.endsWith("\n") ? ca : `${ca}\n`;
}

async function nodesReady(kube: KubeHttp, names: Set<string>): Promise<true | undefined> {
  const list = await kube.json<{ items: { metadata: { name: string } }[] }>("GET", "/api/v1/nodes");
  const ready = list.items.filter((n) => names.has(n.metadata.name) && nodeIsReady(n as never));
  return ready.length === names.size ? true : undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
