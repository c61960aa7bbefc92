// MIG profiles (docs/dev/gpu-sharing.md): the placement pass (computeCapacity + planPlacement, what the
// worker runs per pass) at `--nodes` H100 nodes × 8 cards in 4 clusters with `--requests` waiting sessions,
// without MIG (every request whole cards) against the same fleet with a quarter of the nodes
// MIG-partitioned (3g.40gb + 2g.20gb + 2 × 1g.10gb per card) and a third of the requests MIG instances,
// alternating, p50/p99 over `--rounds`.
//   node bench/src/mig-placement.ts [--nodes 500] [--requests 1000] [--rounds 40]
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { computeCapacity, type InventoryNodeView, type PlacementRequest, planPlacement } from "@berth/controllers";
import { p50p99Ms } from "./kit/percentile.ts";

const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "500" },
    requests: { type: "string", default: "1000" },
    rounds: { type: "string", default: "40" },
  },
});
const NODES = Number(values.nodes);
const REQUESTS = Number(values.requests);
const ROUNDS = Number(values.rounds);
const H100 = "NVIDIA-H100-80GB-HBM3";
const LAYOUT: Record<string, number> = { "3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2 };
const PROFILES = Object.keys(LAYOUT);

function fleet(withMig: boolean): InventoryNodeView[] {
  return Array.from({ length: NODES }, (_, i) => {
    const mig = withMig && i % 4 === 0;
    return {
      clusterId: `clu_${"abcd"[i % 4]}`,
      name: `n${i}`,
      gpuModel: H100,
      gpuAllocatable: mig ? 0 : 8,
      gpuInUse: mig ? 0 : i % 9 === 0 ? 8 : i % 3,
      schedulable: true,
      ready: true,
      ...(mig
        ? {
            mig: Object.fromEntries(
              PROFILES.map((p) => [p, { allocatable: (LAYOUT[p] as number) * 8, inUse: i % 5 === 0 ? 2 : 0 }]),
            ),
          }
        : {}),
    };
  });
}

function requests(withMig: boolean): PlacementRequest[] {
  return Array.from({ length: REQUESTS }, (_, i) => ({
    key: `org_${i % 10}/s${i}`,
    gpuModel: H100,
    gpuCount: withMig && i % 3 === 0 ? 1 : 1 + (i % 2),
    ...(withMig && i % 3 === 0 ? { migProfile: PROFILES[i % PROFILES.length] as string } : {}),
    priority: 0,
    since: new Date(Date.UTC(2026, 10, 29, 0, 0, i)).toISOString(),
    volumes: [],
  }));
}

const clusters = ["clu_a", "clu_b", "clu_c", "clu_d"].map((clusterId) => ({ clusterId, placeable: true }));
const inputs = {
  without: { nodes: fleet(false), reqs: requests(false) },
  with: { nodes: fleet(true), reqs: requests(true) },
};
const pass = (k: keyof typeof inputs) => {
  const t0 = performance.now();
  const capacity = computeCapacity(clusters, inputs[k].nodes, []);
  const plan = planPlacement({ requests: inputs[k].reqs, clusters: capacity, policy: "binpack" });
  return { ms: performance.now() - t0, placed: plan.placed.length };
};
for (let i = 0; i < 5; i++) {
  pass("without");
  pass("with");
}
const times = { without: [] as number[], with: [] as number[] };
const placed = { without: 0, with: 0 };
for (let r = 0; r < ROUNDS; r++)
  for (const k of ["without", "with"] as const) {
    const p = pass(k);
    times[k].push(p.ms);
    placed[k] = p.placed;
  }
console.log(
  `${NODES} nodes × 8 H100, ${REQUESTS} requests, ${ROUNDS} rounds; ${cpus().length} cores, load ${loadavg()[0]?.toFixed(1)}`,
);
console.log(`without MIG: ${p50p99Ms(times.without)} (${placed.without} placed)`);
console.log(
  `with MIG (a quarter of the nodes, a third of the requests): ${p50p99Ms(times.with)} (${placed.with} placed)`,
);
