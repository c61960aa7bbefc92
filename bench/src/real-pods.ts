// biome-ignore-all lint/suspicious/noExplicitAny: the bench reads Kubernetes JSON as it comes
// Real pods on the bed's real node (e2e/src/real/real-fleet.ts), side by side in one run:
//   1. create → JupyterLab answering through the gateway (POST /api/v1/sessions, Running, the connect link's
//      cookie, GET {base}api through gpu-b's gateway = 200), N sessions one after the other, p50/p99,
//      against a bare pod of the same image, the same probe and the same node, created directly
//      (POST pod → GET {base}api at the pod's address = 200); the ratio is Berth's share;
//   2. the image pulled cold (removed from the node's containerd first) and warm, as the kubelet's events
//      say (Pulled: "in Xs"), and the images' sizes (compressed layers, unpacked);
//   3. the node's memory: kubelet, containerd and the container shims, idle and with one JupyterLab.
//   node bench/src/real-pods.ts [--sessions 20]
// Needs root and containerd (the real node); says why and stops elsewhere.
import { execFileSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { HttpKube } from "@berth/controllers/kube";
import { canRunRealNode, kubeConfigFrom } from "@berth/e2e";
import { gatewayOf, podOf, REAL_PRESET, startRealFleet } from "@berth/e2e/real";
import { answering } from "./api.ts";
import { percentile } from "./kit/percentile.ts";

const { values } = parseArgs({ options: { sessions: { type: "string", default: "20" } } });
const N = Number(values.sessions);
const can = canRunRealNode();
if (!can.ok) {
  console.log(`real-pods: ${can.reason}; nothing measured`);
  process.exit(0);
}

const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
async function until<T>(f: () => Promise<T | undefined>, what: string, ms = 180_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(50);
  }
}

const f = await startRealFleet(["jupyterlab"], { nodeName: "gpu-b-real-bench" });
const NODE = f.node.name;
// An interrupted run still takes its node down (its containers, mounts and links are this host's).
for (const sig of ["SIGINT", "SIGTERM"] as const)
  process.once(sig, () => {
    void f.stop().finally(() => process.exit(130));
  });
try {
  const gpuB = f.bed.fleet.cluster("gpu-b");
  const kube = new HttpKube(kubeConfigFrom(gpuB.kubeconfig));
  const jupyter = f.images.jupyterlab as { name: string; ref: string };
  const idle = f.node.memory();

  // Sizes from the pushed image's manifest (the registry's copy is what the kubelet pulls).
  const [repo, tag] = jupyter.ref.slice(jupyter.ref.indexOf("/") + 1).split(":") as [string, string];
  const manifest = (await (
    await fetch(`http://${f.registry.host}/v2/${repo}/manifests/${tag}`, {
      headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
    })
  ).json()) as { layers: { size: number }[] };
  const compressed = manifest.layers.reduce((n, l) => n + l.size, 0);

  /** A bare pod of the image, with the session pod's probe and limits, on the real node; ms to its app's 200. */
  let bareN = 0;
  async function barePod(): Promise<{ ms: number; pulled?: string }> {
    const name = `bare-${++bareN}`;
    const base = `/proxy/${name}/`;
    const t0 = performance.now();
    await kube.json("POST", "/api/v1/namespaces/default/pods", {
      body: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name },
        spec: {
          runtimeClassName: "nvidia",
          nodeSelector: { "kubernetes.io/hostname": NODE },
          tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }],
          securityContext: { runAsUser: 1000, runAsGroup: 100, fsGroup: 100 },
          containers: [
            {
              name: "app",
              image: jupyter.ref,
              ports: [{ name: "http", containerPort: 8888 }],
              env: [
                { name: "BERTH_BASE_PATH", value: base },
                { name: "BERTH_PORT", value: "8888" },
              ],
              readinessProbe: { httpGet: { path: `${base}api`, port: "http" }, periodSeconds: 2 },
              resources: {
                requests: { cpu: "1", memory: "2Gi", "nvidia.com/gpu": "1" },
                limits: { cpu: "1", memory: "2Gi", "nvidia.com/gpu": "1" },
              },
            },
          ],
        },
      },
    });
    const ip = await until(async () => {
      const p = await kube.json<any>("GET", `/api/v1/namespaces/default/pods/${name}`);
      return p.status?.podIP as string | undefined;
    }, `${name}'s address`);
    await until(async () => ((await fetch(`http://${ip}:8888${base}api`)).status === 200 ? true : undefined), name);
    const ms = performance.now() - t0;
    const events = await kube.json<{ items: any[] }>(
      "GET",
      `/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${name}`)}`,
    );
    const pulled = events.items.find((e) => e.reason === "Pulled")?.message as string | undefined;
    await kube.json("DELETE", `/api/v1/namespaces/default/pods/${name}?gracePeriodSeconds=0`);
    await until(async () => {
      const r = await kube.request("GET", `/api/v1/namespaces/default/pods/${name}`);
      return r.status === 404 ? true : undefined;
    }, `${name} gone`);
    return { ms, ...(pulled ? { pulled } : {}) };
  }

  // Cold: the image removed from the node's containerd (the kubelet pulls it from the bed's registry); warm: present.
  execFileSync("ctr", ["-a", f.node.layout.containerdSocket, "-n", "k8s.io", "images", "rm", jupyter.ref], {
    stdio: "ignore",
  });
  const cold = await barePod();
  const warm = await barePod();
  const pullSeconds = (m?: string) => (m ? /in ([\d.]+m?s)/.exec(m)?.[1] : undefined);

  // Berth: the session path, through the gateway.
  const gw = gatewayOf(f);
  const call = answering(() => f.bed.t.api.url);
  const berth: number[] = [];
  let withOne: ReturnType<typeof f.node.memory> | undefined;
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    const created = await call(f.bed.alice, "createSession", {
      body: { offering: "l4", preset: REAL_PRESET, image: jupyter.name },
    });
    if (!created.ok || created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created)}`);
    const params = { sessionId: created.body.id };
    const running = await f.bed.waitFor(
      f.bed.alice,
      params.sessionId,
      (s) => s.phase === "Running",
      "Running",
      180_000,
    );
    const cr = running.resource_name as string;
    const links = await until(async () => {
      const r = await call(f.bed.alice, "getSessionConnectLinks", { params });
      if (!r.ok) console.error(`connect: ${r.status} ${JSON.stringify(r).slice(0, 300)}`);
      return r.ok ? r.body : undefined;
    }, `${cr}'s connect links`);
    const cookie = await gw.signIn(links.links.lab);
    await until(
      async () => ((await gw.open(`${gw.url}/proxy/${cr}/api`, { cookie })).status === 200 ? true : undefined),
      `${cr} through the gateway`,
    );
    berth.push(performance.now() - t0);
    withOne ??= f.node.memory();
    await call(f.bed.alice, "terminateSession", { params });
    await until(async () => ((await podOf(f, cr)) === undefined ? true : undefined), `${cr} gone`);
  }
  const bare: number[] = [];
  for (let i = 0; i < N; i++) bare.push((await barePod()).ms);
  kube.close();

  const p50 = percentile(berth, 50);
  const b50 = percentile(bare, 50);
  const unpacked = (() => {
    try {
      const out = execFileSync("ctr", ["-a", f.node.layout.containerdSocket, "-n", "k8s.io", "images", "ls"], {
        encoding: "utf8",
      });
      return out.split("\n").find((l) => l.startsWith(jupyter.ref));
    } catch {
      return undefined;
    }
  })();
  const lines = [
    `real-pods: ${N} JupyterLab sessions and ${N} bare pods, one after the other, on ${NODE} (1 fake GPU each)`,
    `  create → JupyterLab answering, Berth through the gateway: p50 ${(p50 / 1000).toFixed(2)} s, p99 ${(percentile(berth, 99) / 1000).toFixed(2)} s`,
    `  create → JupyterLab answering, bare pod at its address:   p50 ${(b50 / 1000).toFixed(2)} s, p99 ${(percentile(bare, 99) / 1000).toFixed(2)} s`,
    `  Berth adds ${((p50 - b50) / 1000).toFixed(2)} s at p50 (×${(p50 / b50).toFixed(2)})`,
    `  image pull from the bed's registry: cold ${pullSeconds(cold.pulled) ?? "?"} (pod answering after ${(cold.ms / 1000).toFixed(2)} s), warm ${pullSeconds(warm.pulled) ?? "present"} (${(warm.ms / 1000).toFixed(2)} s)`,
    `  JupyterLab image: ${manifest.layers.length} layers, ${mib(compressed)} compressed${unpacked ? `; containerd: ${unpacked.replace(/\s+/g, " ")}` : ""}`,
    `  node memory idle: kubelet ${mib(idle.kubeletBytes)}, containerd ${mib(idle.containerdBytes)}, shims ${mib(idle.shimBytes)} (${idle.shims})`,
    withOne
      ? `  node memory with one JupyterLab: kubelet ${mib(withOne.kubeletBytes)}, containerd ${mib(withOne.containerdBytes)}, shims ${mib(withOne.shimBytes)} (${withOne.shims})`
      : "",
  ];
  console.log(lines.filter(Boolean).join("\n"));
  console.log(JSON.stringify({ N, berth, bare, cold, warm, compressed, idle, withOne }));
} finally {
  await f.stop();
}
