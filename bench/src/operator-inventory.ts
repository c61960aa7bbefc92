// Operator inventory at scale: a GPU cluster of 500 kwok nodes × 8 GPUs (and GPU pods on them), the
// operator with its least-privilege credential and production defaults (debounce 500 ms, resync 60 s),
// reporting to the stub control plane (operator/src/testing). Figures:
//   - time from operator start to the first report, and to the full inventory received (every node,
//     every GPU in use counted);
//   - reports per minute in steady state (the default 10-minute window outlasts kwok's 5–10 min node
//     heartbeat period, so every node heartbeats at least once in it), split into resyncs (nothing changed) and changes, next to the
//     node updates the apiserver saw in the same window (kwok's heartbeats: what must not reach the wire);
//   - latency of one cordon from the PATCH to the report that shows it;
//   - size of one full report.
//
//   node bench/src/operator-inventory.ts [--nodes=500] [--gpus=8] [--pods=500] [--steady=600]
//
// Receiver: the stub control plane (operator/src/testing/), so the figures are the operator's own.
import { cpus, loadavg, totalmem } from "node:os";
import { parseArgs } from "node:util";
import type { InventoryReport } from "@berth/crds/internal-plane";
import { gpuNodeManifest, kubeConfigFrom } from "@berth/e2e";
import { H100, SESSIONS_NS, startBed } from "@berth/e2e/operator-bed";
import { inventoryFingerprint, parseConfig, startOperator } from "@berth/operator";
import { captureLog, startStubControlPlane } from "@berth/operator/testing";
import { Watch } from "@kubernetes/client-node";

const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "500" },
    gpus: { type: "string", default: "8" },
    pods: { type: "string", default: "500" },
    steady: { type: "string", default: "600" },
  },
});
const NODES = Number(values.nodes);
const GPUS = Number(values.gpus);
const PODS = Number(values.pods);
const STEADY_S = Number(values.steady);
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const mb = (b: number) => `${(b / 2 ** 20).toFixed(1)} MB`;
const kb = (b: number) => `${(b / 1024).toFixed(0)} KB`;

console.log(
  `machine: ${cpus().length} CPUs, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
console.log(`cluster: ${NODES} kwok nodes × ${GPUS} GPUs, ${PODS} one-GPU pods; steady window ${STEADY_S} s\n`);

const tBed = performance.now();
const nodes = Array.from({ length: NODES }, (_, i) => ({
  name: `gpu-${String(i).padStart(4, "0")}`,
  gpuModel: H100,
  gpuCount: GPUS,
}));
// The nodes are created here rather than by startFleet, whose 90 s readiness limit is too short for 500
// nodes on a loaded 2-CPU machine.
const bed = await startBed([]);
{
  let next = 0;
  const createOne = async () => {
    while (next < nodes.length) {
      const n = nodes[next++];
      if (n) await bed.admin.json("POST", "/api/v1/nodes", gpuNodeManifest(n));
    }
  };
  await Promise.all(Array.from({ length: 32 }, createOne));
  for (;;) {
    const list = await bed.admin.json<{ items: { status?: { conditions?: { type: string; status: string }[] } }[] }>(
      "GET",
      "/api/v1/nodes",
    );
    const ready = list.items.filter((n) =>
      n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
    ).length;
    if (ready >= NODES) break;
    if (performance.now() - tBed > 900_000) throw new Error(`only ${ready} of ${NODES} nodes Ready after 15 min`);
    await new Promise((r) => setTimeout(r, 1_000));
  }
}
console.log(`bed up with ${NODES} Ready nodes in ${secs(performance.now() - tBed)}`);

const stub = await startStubControlPlane({ tokens: { "bench-token": "clu_bench" } });
const received: { at: number; report: InventoryReport; bytes: number }[] = [];
stub.onInventory = (report, bytes) => received.push({ at: performance.now(), report, bytes });

let nodeUpdates = 0;
let stopped = false;
const watchAbort = new Set<AbortController>();
try {
  // GPU pods, so in-use has something to count (the scheduler spreads them; kwok marks them Running).
  if (PODS > 0) {
    const tPods = performance.now();
    let next = 0;
    const createOne = async () => {
      while (next < PODS) {
        const i = next++;
        await bed.admin.json("POST", `/api/v1/namespaces/${SESSIONS_NS}/pods`, {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: `bench-${i}` },
          spec: {
            runtimeClassName: "nvidia",
            containers: [{ name: "c", image: "x", resources: { limits: { "nvidia.com/gpu": "1" } } }],
          },
        });
      }
    };
    await Promise.all(Array.from({ length: 32 }, createOne));
    for (;;) {
      const list = await bed.admin.json<{ items: unknown[] }>(
        "GET",
        `/api/v1/namespaces/${SESSIONS_NS}/pods?fieldSelector=status.phase%3DRunning`,
      );
      if (list.items.length >= PODS) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    console.log(`${PODS} GPU pods Running in ${secs(performance.now() - tPods)} (32 concurrent creates, admin client)`);
  }

  const config = parseConfig({
    clusterId: "clu_bench",
    kube: { mode: "kubeconfig", path: bed.kubeconfigPath },
    controlPlaneUrl: stub.url,
    tokenFile: bed.writeToken("token", "bench-token"),
    http: { host: "127.0.0.1", port: 0 },
    lease: { namespace: "berth-system", name: "berth-operator", identity: "bench" },
  });
  const expectedInUse = PODS;
  const full = (r: InventoryReport) =>
    r.nodes.length === NODES &&
    r.nodes.every((n) => n.ready) &&
    r.nodes.reduce((s, n) => s + n.gpu_in_use, 0) === expectedInUse;

  const t0 = performance.now();
  const operator = await startOperator(config, { log: captureLog("info").log });
  try {
    while (!received.some((r) => full(r.report))) {
      if (performance.now() - t0 > 120_000) throw new Error("no full inventory within 120 s");
      await new Promise((r) => setTimeout(r, 20));
    }
    const first = received[0];
    const fullAt = received.find((r) => full(r.report));
    console.log("\nstart-up");
    console.log(
      `  operator start → first report received:   ${secs((first?.at ?? 0) - t0)} (${first?.report.nodes.length} nodes)`,
    );
    console.log(
      `  operator start → full inventory received:  ${secs((fullAt?.at ?? 0) - t0)} (${NODES} nodes, ${NODES * GPUS} GPUs, ${expectedInUse} in use)`,
    );
    console.log(`  one full report: ${kb(fullAt?.bytes ?? 0)} of JSON`);

    // Count what the apiserver does meanwhile: kwok's node status heartbeats (every 5–10 min per node, as
    // a kubelet's nodeStatusReportFrequency) and node lease renewals are the churn to ignore.
    const watch = new Watch(kubeConfigFrom(bed.gpu.kubeconfig));
    const count = (path: string, onModified: () => void) => {
      let rv = "";
      const start = async (): Promise<void> => {
        const c = await watch.watch(
          path,
          { resourceVersion: rv || undefined, allowWatchBookmarks: true },
          (type, obj: { metadata?: { resourceVersion?: string } }) => {
            rv = obj.metadata?.resourceVersion ?? rv;
            if (type === "MODIFIED") onModified();
          },
          () => {
            if (!stopped) void start(); // client-node ends quiet watches after 30 s: resume
          },
        );
        watchAbort.add(c);
      };
      return start();
    };
    let leaseRenewals = 0;
    await count("/api/v1/nodes", () => nodeUpdates++);
    await count("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", () => leaseRenewals++);

    // Steady state: nothing changes but heartbeats.
    await new Promise((r) => setTimeout(r, 2_000)); // let start-up settle
    nodeUpdates = 0;
    leaseRenewals = 0;
    const steadyFrom = performance.now();
    const before = received.length;
    await new Promise((r) => setTimeout(r, STEADY_S * 1000));
    const steady = received.slice(before);
    const minutes = (performance.now() - steadyFrom) / 60_000;
    let resyncs = 0;
    let changes = 0;
    let prev = inventoryFingerprint(received[before - 1]?.report.nodes ?? []);
    for (const r of steady) {
      const fp = inventoryFingerprint(r.report.nodes);
      if (fp === prev) resyncs++;
      else changes++;
      prev = fp;
    }
    console.log(`\nsteady state (${(minutes * 60).toFixed(0)} s, nothing changed but heartbeats)`);
    console.log(
      `  node status updates (heartbeats) in the cluster: ${nodeUpdates} (${(nodeUpdates / minutes).toFixed(1)}/min)`,
    );
    console.log(
      `  node lease renewals in the cluster (not watched): ${leaseRenewals} (${(leaseRenewals / minutes).toFixed(0)}/min)`,
    );
    console.log(
      `  reports received: ${steady.length} (${(steady.length / minutes).toFixed(2)}/min): ${resyncs} resync(s), ${changes} change(s)`,
    );

    // One cordon, end to end.
    const tCordon = performance.now();
    await bed.admin.json(
      "PATCH",
      `/api/v1/nodes/${nodes[0]?.name}`,
      { spec: { unschedulable: true } },
      "application/merge-patch+json",
    );
    while (
      !received.some(
        (r) => r.at > tCordon && r.report.nodes.find((n) => n.name === nodes[0]?.name)?.schedulable === false,
      )
    ) {
      if (performance.now() - tCordon > 30_000) throw new Error("cordon not reported within 30 s");
      await new Promise((r) => setTimeout(r, 5));
    }
    console.log(
      `\nchange latency: cordon PATCH → report showing it: ${secs(performance.now() - tCordon)} (debounce 500 ms included)`,
    );
    const metrics = await (await fetch(operator.metricsUrl)).text();
    const heap = /berth_operator_nodejs_heap_size_used_bytes\{[^}]*\} (\d+)/.exec(metrics)?.[1];
    console.log(`process heap used after the run (bench + operator in one process): ${mb(Number(heap ?? 0))}`);
  } finally {
    await operator.stop();
  }
} finally {
  stopped = true;
  for (const c of watchAbort) c.abort();
  await stub.close();
  await bed.stop();
}
