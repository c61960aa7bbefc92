// biome-ignore-all lint/suspicious/noExplicitAny: the bench reads the API's JSON as it comes
// Node pools and hardware faults (docs/dev/node-pools.md), two figures:
// 1. The placement pass (computeCapacity + planPlacement, what the worker runs per pass) at `--nodes` nodes
//    in 4 clusters with `--requests` waiting sessions of 10 organizations: today's pass (no pools, the
//    constraint list without node-pool-grants) against the pass with a fifth of the nodes in 8 pools granted
//    to some of the organizations, alternating, p50/p99 over `--rounds`.
// 2. With `--xid`: on the bed (real apiserver with kwok nodes, Postgres, the API, the worker, the operator
//    scraping the stand-in DCGM exporter every `--scrape-ms`), the time from raising an XID on a card to the
//    node's `spec.unschedulable` on its cluster, and to the administrators' notification, per node.
//   node bench/src/node-pools.ts [--nodes 500] [--requests 1000] [--rounds 40] [--xid] [--xid-nodes 5] [--scrape-ms 1000]
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import {
  computeCapacity,
  DEFAULT_CONSTRAINTS,
  type InventoryNodeView,
  type NodePoolRef,
  type PlacementRequest,
  planPlacement,
} from "@berth/controllers";
import { startGpuExporter } from "@berth/e2e/gpu-exporter";
import { adminKube, gpuCluster, H100, MANAGEMENT, startSessionsBed } from "@berth/e2e/sessions";
import { p50p99Ms, upperPercentile } from "./kit/percentile.ts";

const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "500" },
    requests: { type: "string", default: "1000" },
    rounds: { type: "string", default: "40" },
    xid: { type: "boolean", default: false },
    "xid-nodes": { type: "string", default: "5" },
    "scrape-ms": { type: "string", default: "1000" },
  },
});
const NODES = Number(values.nodes);
const REQUESTS = Number(values.requests);
const ROUNDS = Number(values.rounds);

function fleet(withPools: boolean): InventoryNodeView[] {
  const clusters = ["clu_a", "clu_b", "clu_c", "clu_d"];
  const pools: NodePoolRef[] = Array.from({ length: 8 }, (_, i) => ({
    id: `npl_${i}`,
    clusterId: clusters[i % 4] as string,
    label: { key: "berth.dev/pool", values: [`p${i}`] },
    grantees: [`organization:org_${i}`, `project:prj_${i}`],
  }));
  return Array.from({ length: NODES }, (_, i) => {
    const clusterId = clusters[i % 4] as string;
    // A fifth of the nodes are in a pool of their cluster.
    const ofCluster = pools.filter((p) => p.clusterId === clusterId);
    const pool = withPools && i % 5 === 0 ? ofCluster[(i / 5) % ofCluster.length] : undefined;
    return {
      clusterId,
      name: `node-${i}`,
      gpuModel: H100,
      gpuAllocatable: 8,
      gpuInUse: i % 3 === 0 ? 8 : i % 3,
      schedulable: true,
      ready: true,
      ...(pool ? { pools: [pool] } : {}),
    };
  });
}

function requests(): PlacementRequest[] {
  return Array.from({ length: REQUESTS }, (_, i) => ({
    key: `org-${i % 10}/ses-${i}`,
    gpuModel: H100,
    gpuCount: 1 + (i % 4),
    priority: i % 3,
    since: new Date(Date.UTC(2026, 10, 29, 0, 0, i)).toISOString(),
    volumes: [],
    tenancy: { organization: `org_${i % 10}`, project: `prj_${i % 20}` },
  }));
}

function pass(nodes: InventoryNodeView[], reqs: PlacementRequest[], today: boolean) {
  const clusters = ["clu_a", "clu_b", "clu_c", "clu_d"].map((clusterId) => ({ clusterId, placeable: true }));
  return planPlacement({
    requests: reqs,
    clusters: computeCapacity(clusters, nodes, []),
    policy: "binpack",
    constraints: today ? DEFAULT_CONSTRAINTS.filter((c) => c.name !== "node-pool-grants") : DEFAULT_CONSTRAINTS,
  });
}

function placementFigures() {
  const plain = fleet(false);
  const pooled = fleet(true);
  const reqs = requests();
  for (let i = 0; i < 5; i++) {
    pass(plain, reqs, true);
    pass(pooled, reqs, false);
  }
  const before: number[] = [];
  const after: number[] = [];
  let placed = [0, 0];
  for (let i = 0; i < ROUNDS; i++) {
    let t = performance.now();
    const a = pass(plain, reqs, true);
    before.push(performance.now() - t);
    t = performance.now();
    const b = pass(pooled, reqs, false);
    after.push(performance.now() - t);
    placed = [a.placed.length, b.placed.length];
  }
  const inPools = pooled.filter((n) => n.pools).length;
  console.log(
    `placement pass, ${NODES} nodes (${inPools} in 8 pools), ${REQUESTS} waiting sessions, ${ROUNDS} rounds alternating`,
  );
  console.log(`  today's pass (no pools):   ${p50p99Ms(before)}  placed ${placed[0]}`);
  console.log(`  with pool grants:          ${p50p99Ms(after)}  placed ${placed[1]}`);
  console.log(`  ratio p50 ${(upperPercentile(after, 50) / upperPercentile(before, 50)).toFixed(2)}`);
}

async function xidFigures() {
  const n = Number(values["xid-nodes"]);
  const names = Array.from({ length: n }, (_, i) => `gpu-a-${i + 1}`);
  const uuid = (i: number) => `GPU-${String(i).padStart(8, "0")}-aaaa-4bbb-8ccc-000000000000`;
  const exporter = await startGpuExporter({
    cards: names.map((node, i) => ({ uuid: uuid(i), node, model: H100, memoryMiB: 81_559 })),
  });
  const bed = await startSessionsBed({
    fleet: {
      clusters: [
        MANAGEMENT,
        gpuCluster(
          "gpu-a",
          names.map((name) => ({ name, gpuModel: H100, gpuCount: 1 })),
        ),
      ],
    },
    operatorGpuMetrics: { url: exporter.url, intervalMs: Number(values["scrape-ms"]) },
  });
  try {
    const db = bed.t.database.db;
    const kube = adminKube(bed.fleet.cluster("gpu-a"));
    const deadline = (what: string, t0: number) => {
      if (performance.now() - t0 > 60_000) throw new Error(`no ${what} within 60 s`);
    };
    // Every node's baseline round first.
    const watched = async () =>
      Number(((await db("node_fault_counters").countDistinct("node_name as n").first()) as any)?.n ?? 0);
    for (const t0 = performance.now(); (await watched()) < n; await new Promise((r) => setTimeout(r, 50)))
      deadline("baseline", t0);
    const toCordon: number[] = [];
    const toNotice: number[] = [];
    for (const [i, node] of names.entries()) {
      const t0 = performance.now();
      exporter.raiseXid(uuid(i), 79);
      let cordoned = 0;
      let noticed = 0;
      while (!cordoned || !noticed) {
        deadline("cordon", t0);
        if (!cordoned) {
          const spec = (await kube.json<any>("GET", `/api/v1/nodes/${node}`)).spec;
          if (spec.unschedulable) cordoned = performance.now() - t0;
        }
        if (
          !noticed &&
          (await db("notifications")
            .where({ kind: "node.fault_cordoned" })
            .whereRaw("data->>'node' = ?", [node])
            .first())
        )
          noticed = performance.now() - t0;
        await new Promise((r) => setTimeout(r, 20));
      }
      toCordon.push(cordoned);
      toNotice.push(noticed);
    }
    console.log(`injected XID → cordon, ${n} nodes, operator scrape every ${values["scrape-ms"]} ms (the bound)`);
    console.log(
      `  to spec.unschedulable on the cluster: ${p50p99Ms(toCordon)}  max ${Math.max(...toCordon).toFixed(0)} ms`,
    );
    console.log(
      `  to the administrators' notification: ${p50p99Ms(toNotice)}  max ${Math.max(...toNotice).toFixed(0)} ms`,
    );
  } finally {
    await bed.stop();
    await exporter.stop();
  }
}

console.log(
  `${cpus().length} cores, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);
placementFigures();
if (values.xid) await xidFigures();
