// The kind provider: the same fleet description as the test bed's, as kind clusters (Kubernetes in
// Docker) for people with Docker. One kind cluster per description entry (`berth-<name>`), a local OCI
// registry every cluster pulls through (localhost:5001, KEP-1755's ConfigMap announces it), and on GPU
// clusters kwok inside the cluster playing the GPU nodes (the bed's own node manifests and stages:
// capacity, labels, the sharing layer's annotations), the stub `nvidia` RuntimeClass and device-plugin
// DaemonSet, so registration's probe passes. Berth's image is built and pushed without Docker
// (cdk8s/src/image) and, with `installBerth`, Berth is applied from cdk8s/dist/kind.
//
// Everything is a plan first (kind-plan.ts kindPlan: files and commands, pure, unit-tested), then run by a runner
// (startKindFleet). The journeys run Berth's processes on the host against these clusters, exactly as
// with the test bed. What the bed does differently: an apiserver restart is the node's (`docker restart`),
// pods' logs are kwok's (not the bed's CRI file), there are no local pids to count; flags for components
// other than kube-apiserver throw KindUnsupported (kind-plan.ts).
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { mintCredential } from "../testbed/credentials.ts";
import { gpuNodeManifest } from "../testbed/gpu.ts";
import { KubeHttp } from "../testbed/kube.ts";
import type { Cluster, ClusterDescription, Fleet, FleetDescription } from "../testbed/types.ts";
import { type KindOptions, kindContext, kindName, kindPlan } from "./kind-plan.ts";

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}
export type Runner = (argv: string[]) => Promise<RunResult>;

export const execRunner: Runner = (argv) =>
  new Promise((resolve) => {
    execFile(argv[0] as string, argv.slice(1), { maxBuffer: 64 * 2 ** 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });

/** Which of the tools the provider runs are missing from PATH. */
export async function missingTools(run: Runner = execRunner): Promise<string[]> {
  const missing: string[] = [];
  for (const [tool, args] of [
    ["docker", ["version", "--format", "{{.Server.Version}}"]],
    ["kind", ["version"]],
    ["kubectl", ["version", "--client"]],
  ] as const)
    if ((await run([tool, ...args]).catch(() => ({ code: 127 }))).code !== 0) missing.push(tool);
  return missing;
}

/** The API server and CA kind wrote for a cluster (`kind get kubeconfig`). */
export function serverAndCa(kubeconfig: string): { server: string; caPem: string } {
  const server = /server:\s*(\S+)/.exec(kubeconfig)?.[1];
  const ca = /certificate-authority-data:\s*(\S+)/.exec(kubeconfig)?.[1];
  if (!server || !ca) throw new Error("kind's kubeconfig names no server or CA");
  return { server, caPem: Buffer.from(ca, "base64").toString() };
}

export async function startKindFleet(
  description: FleetDescription,
  opts: Partial<KindOptions> & { run?: Runner; log?: (line: string) => void } = {},
): Promise<Fleet> {
  const run = opts.run ?? execRunner;
  const log = opts.log ?? (() => {});
  const missing = await missingTools(run);
  if (missing.length > 0)
    throw new Error(
      `BERTH_E2E_PROVIDER=kind needs ${missing.join(", ")} on PATH (and a running Docker daemon); the default provider, testbed, needs none of them`,
    );
  const t0 = performance.now();
  const workDir = opts.workDir ?? mkdtempSync(join(tmpdir(), "berth-kind-"));
  const plan = kindPlan(description, { ...opts, workDir });
  for (const [p, text] of plan.files) {
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, text);
  }
  const created: string[] = [];
  const tokens = new Map<string, string>();
  const deleteClusters = async () => {
    for (const name of created) await run(["kind", "delete", "cluster", "--name", name]);
    rmSync(workDir, { recursive: true, force: true });
  };
  try {
    for (const step of plan.steps) {
      log(`[kind] ${step.why}: ${step.argv.join(" ")}`);
      const r = await run(step.argv);
      if (r.code !== 0 && !step.tolerate?.test(`${r.stdout}${r.stderr}`))
        throw new Error(`${step.why} failed (${step.argv.join(" ")}): ${r.stderr.trim().slice(-2000)}`);
      if (step.argv[0] === "kind" && step.argv[1] === "create") {
        const config = step.argv[step.argv.indexOf("--config") + 1] as string;
        const name = /^name: (\S+)$/m.exec(plan.files.get(config) ?? "")?.[1];
        if (name) created.push(name);
      }
      if (step.tokenOf) tokens.set(step.tokenOf, r.stdout.trim());
    }
    const clusters: Cluster[] = [];
    for (const c of description.clusters) {
      const kc = await run(["kind", "get", "kubeconfig", "--name", kindName(c.name)]);
      if (kc.code !== 0) throw new Error(`kind get kubeconfig --name ${kindName(c.name)}: ${kc.stderr}`);
      clusters.push(
        kindCluster(c, {
          ...serverAndCa(kc.stdout),
          kubeconfig: kc.stdout,
          adminToken: tokens.get(c.name) ?? "",
          workDir,
          run,
        }),
      );
    }
    const startMs = Math.round(performance.now() - t0);
    return {
      clusters,
      cluster(name) {
        const c = clusters.find((x) => x.name === name);
        if (!c) throw new Error(`no cluster "${name}" in this fleet (${clusters.map((x) => x.name).join(", ")})`);
        return c;
      },
      dataDir: workDir,
      timings: [],
      startMs,
      realNodes: [], // kind's nodes are real already
      pids: () => [],
      stop: deleteClusters,
    };
  } catch (err) {
    await deleteClusters();
    throw err;
  }
}

function kindCluster(
  desc: ClusterDescription,
  k: { server: string; caPem: string; kubeconfig: string; adminToken: string; workDir: string; run: Runner },
): Cluster {
  const kubeconfigPath = join(k.workDir, `${desc.name}.kubeconfig`);
  writeFileSync(kubeconfigPath, k.kubeconfig);
  const admin = () => new KubeHttp({ server: k.server, caPem: k.caPem, token: k.adminToken });
  return {
    name: desc.name,
    kind: desc.kind,
    server: k.server,
    caPem: k.caPem,
    adminToken: k.adminToken,
    kubeconfigPath,
    kubeconfig: k.kubeconfig,
    dataDir: k.workDir,
    timings: [],
    async mintCredential(opts) {
      const kube = admin();
      try {
        return await mintCredential({ kube, cluster: desc.name, server: k.server, caPem: k.caPem }, opts);
      } finally {
        kube.close();
      }
    },
    async addGpuNode(node) {
      const kube = admin();
      try {
        await kube.json("POST", "/api/v1/nodes", gpuNodeManifest(node));
      } finally {
        kube.close();
      }
      const r = await k.run([
        "kubectl",
        "--context",
        kindContext(desc.name),
        "wait",
        "--for=condition=Ready",
        "--timeout=120s",
        `node/${node.name}`,
      ]);
      if (r.code !== 0) throw new Error(`node ${node.name} never Ready: ${r.stderr}`);
    },
    // The whole node restarts (apiserver, etcd, kwok inside it): the same port and data, as on the bed.
    async restartApiServer() {
      const node = `${kindName(desc.name)}-control-plane`;
      const r = await k.run(["docker", "restart", node]);
      if (r.code !== 0) throw new Error(`docker restart ${node}: ${r.stderr}`);
      for (let i = 0; ; i++) {
        const ready = await k.run(["kubectl", "--context", kindContext(desc.name), "get", "--raw", "/readyz"]);
        if (ready.code === 0 && ready.stdout.trim() === "ok") return;
        if (i >= 120) throw new Error(`${desc.name}'s apiserver is not ready 2 minutes after its restart`);
        await new Promise((res) => setTimeout(res, 1_000));
      }
    },
    pids: () => [],
    async stop() {
      await k.run(["kind", "delete", "cluster", "--name", kindName(desc.name)]);
    },
  };
}
