// Fractional GPU tiers (docs/dev/gpu-sharing.md). Two figures, each beside its whole-GPU baseline:
//
// 1. Placement time per session on a fleet of `--nodes` HAMi nodes × `--cards` H100 cards, sessions of
//    mixed tiers (1/8, 1/4, 1/2, 1 and 2 cards) arriving one at a time until the fleet is `--fill` full:
//    each arrival is one placement pass as the worker runs it (the card pool built from the inventory and
//    the holdings, then the plan), p50/p99. Baseline: the same number of whole-GPU sessions on the same
//    fleet without a sharing layer (counted per cluster, the kube-scheduler picks the node), and whole
//    GPUs on the HAMi fleet (card by card).
// 2. Sessions per H100 at the 1/8 tier on the test bed, end to end (API, worker, operator, kube-scheduler,
//    kwok): `--bed-cards` cards on one HAMi node, 8 × cards + 1 sessions of `h100-1-8`; sessions Running
//    per card, and the extra one queued. Baseline: the `h100` whole-card offering, one per card.
//
//   node bench/src/gpu-sharing.ts [--nodes=500] [--cards=8] [--fill=0.85] [--seed=20261126] [--bed-cards=2] [--no-bed]
import { cpus, loadavg, totalmem } from "node:os";
import { parseArgs } from "node:util";
import type { ResponseOf } from "@berth/console/client";
import {
  type CardHolding,
  CardPool,
  type CardView,
  computeCapacity,
  type Holding,
  type InventoryNodeView,
  type PlacementRequest,
  planPlacement,
  seededRandom,
} from "@berth/controllers";
import { ResourcePolicyKind, resourcePath, sliceOf } from "@berth/crds";
import { apiAs } from "./api.ts";
import { upperPercentile } from "./kit/percentile.ts";

const { values } = parseArgs({
  options: {
    nodes: { type: "string", default: "500" },
    cards: { type: "string", default: "8" },
    fill: { type: "string", default: "0.85" },
    seed: { type: "string", default: "20261126" },
    "bed-cards": { type: "string", default: "2" },
    "no-bed": { type: "boolean", default: false },
  },
});
const NODES = Number(values.nodes);
const CARDS = Number(values.cards);
const FILL = Number(values.fill);
const H100 = "NVIDIA-H100-80GB-HBM3";
const CARD_MIB = 81559;

console.log(
  `machine: ${cpus().length} CPUs, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);

type Tier = { name: string; slices?: number; cards: number; weight: number };
const MIXED: Tier[] = [
  { name: "1/8", slices: 8, cards: 1, weight: 0.35 },
  { name: "1/4", slices: 4, cards: 1, weight: 0.25 },
  { name: "1/2", slices: 2, cards: 1, weight: 0.15 },
  { name: "1", cards: 1, weight: 0.15 },
  { name: "2", cards: 2, weight: 0.1 },
];
const occupancy = (t: Tier) => (t.slices ? 1 / t.slices : t.cards);

interface Run {
  label: string;
  sessions: number;
  placed: number;
  times: number[];
  occupancy: number;
  /** CPU the passes took (user + system), ms: robust where other work shares the machine. */
  cpuMs: number;
}

/** Sessions arrive one at a time; each is one pass (pool from inventory + holdings, then the plan). */
function simulate(label: string, sharing: boolean, tiers: Tier[], seed: number): Run {
  const next = seededRandom(seed);
  const pick = () => {
    let r = next();
    for (const t of tiers) {
      r -= t.weight;
      if (r <= 0) return t;
    }
    return tiers[tiers.length - 1] as Tier;
  };
  const emptyCard = (n: number, i: number): CardView => ({
    uuid: `GPU-${n}-${i}`,
    memoryMib: CARD_MIB,
    cores: 100,
    split: 10,
    healthy: true,
    memoryUsedMib: 0,
    coresUsed: 0,
    vgpusUsed: 0,
  });
  // The inventory as the operator reports it (it lags: it shows nothing of Berth's placements; the
  // holdings carry them, which is the worse case for the pass: every card's use comes from holdings).
  const inventory: InventoryNodeView[] = Array.from({ length: NODES }, (_, n) => ({
    clusterId: "clu_a",
    name: `gpu-${String(n).padStart(4, "0")}`,
    gpuModel: H100,
    gpuAllocatable: CARDS,
    gpuInUse: 0,
    schedulable: true,
    ready: true,
    ...(sharing ? { sharing: "hami" as const, cards: Array.from({ length: CARDS }, (_, i) => emptyCard(n, i)) } : {}),
  }));
  const cardHoldings: CardHolding[] = [];
  const holdings: Holding[] = [];
  const capacity = NODES * CARDS;
  let used = 0;
  let placed = 0;
  let sessions = 0;
  const times: number[] = [];
  let misses = 0;
  const cpu0 = process.cpuUsage();
  while (used < FILL * capacity && misses < 50) {
    const t = pick();
    sessions++;
    const req: PlacementRequest = {
      key: `org/s${sessions}`,
      gpuModel: H100,
      gpuCount: t.cards,
      ...(t.slices
        ? { slice: { memoryMib: sliceOf(CARD_MIB, t.slices).memoryMib, cores: sliceOf(CARD_MIB, t.slices).cores } }
        : {}),
      priority: 0,
      since: new Date(1_800_000_000_000 + sessions).toISOString(),
      volumes: [],
    };
    const start = performance.now();
    const plan = planPlacement({
      requests: [req],
      clusters: computeCapacity([{ clusterId: "clu_a", placeable: true }], inventory, holdings),
      policy: "binpack",
      ...(sharing ? { cards: new CardPool(inventory, cardHoldings) } : {}),
    });
    times.push(performance.now() - start);
    const p = plan.placed[0];
    if (!p) {
      misses++;
      continue;
    }
    placed++;
    used += occupancy(t);
    if (p.assignment)
      cardHoldings.push({
        clusterId: "clu_a",
        node: p.assignment.node,
        cards: p.assignment.cards,
        ...(req.slice ? { slice: req.slice } : {}),
      });
    if (!req.slice) holdings.push({ clusterId: "clu_a", gpuModel: H100, gpuCount: t.cards });
  }
  const cpu = process.cpuUsage(cpu0);
  return { label, sessions, placed, times, occupancy: used, cpuMs: (cpu.user + cpu.system) / 1000 };
}

const seed = Number(values.seed);
console.log(
  `\nplacement time per session: ${NODES} nodes × ${CARDS} H100 (${NODES * CARDS} cards), arrivals one pass each until ${Math.round(FILL * 100)} % occupied, policy binpack, seed ${seed}`,
);
const runs = [
  simulate("mixed tiers on HAMi (1/8 35 %, 1/4 25 %, 1/2 15 %, 1 card 15 %, 2 cards 10 %)", true, MIXED, seed),
  simulate(
    "baseline: whole GPUs (1 card 60 %, 2 cards 40 %), no sharing layer",
    false,
    [
      { name: "1", cards: 1, weight: 0.6 },
      { name: "2", cards: 2, weight: 0.4 },
    ],
    seed,
  ),
  simulate(
    "whole GPUs on HAMi (1 card 60 %, 2 cards 40 %), card by card",
    true,
    [
      { name: "1", cards: 1, weight: 0.6 },
      { name: "2", cards: 2, weight: 0.4 },
    ],
    seed,
  ),
];
const rows = runs.map((r) => ({
  run: r.label,
  sessions: r.placed,
  "GPU occupancy": r.occupancy.toFixed(1),
  "p50 ms": upperPercentile(r.times, 50, 0).toFixed(2),
  "p99 ms": upperPercentile(r.times, 99, 0).toFixed(2),
  "max ms": Math.max(...r.times).toFixed(2),
  "CPU ms per pass (mean)": (r.cpuMs / r.times.length).toFixed(2),
}));
console.table(rows);
const base = runs[1] as Run;
const mixed = runs[0] as Run;
console.log(
  `mixed ÷ baseline: p50 ${(upperPercentile(mixed.times, 50, 0) / upperPercentile(base.times, 50, 0)).toFixed(1)}×, p99 ${(upperPercentile(mixed.times, 99, 0) / upperPercentile(base.times, 99, 0)).toFixed(1)}×; sessions placed ${(mixed.placed / base.placed).toFixed(2)}× at the same fill`,
);

if (!values["no-bed"]) {
  const { startSessionsBed, adminKube } = await import("@berth/e2e/sessions");
  const bedCards = Number(values["bed-cards"]);
  console.log(`\nsessions per H100 on the bed: one HAMi node with ${bedCards} H100 cards, end to end`);
  const bed = await startSessionsBed({
    fleet: {
      clusters: [
        { name: "mgmt", kind: "management" },
        {
          name: "gpu-a",
          kind: "gpu",
          nodes: [{ name: "gpu-a-1", gpuModel: H100, gpuCount: bedCards, sharing: "hami" }],
          gpuRuntimeClass: true,
          gpuDevicePlugin: "hami",
        },
      ],
    },
  });
  try {
    const mgmt = adminKube(bed.fleet.cluster("mgmt"));
    await mgmt.json(
      "PATCH",
      resourcePath(ResourcePolicyKind, { name: "global" }),
      { spec: { limits: { maxConcurrentSessionsPerUser: 64, maxGpusPerUser: 64 } } },
      "application/merge-patch+json",
    );
    mgmt.close();
    const alice = apiAs(bed.t.api.url, bed.alice);
    const measure = async (offering: string, n: number) => {
      const t0 = performance.now();
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const r = await alice.call("createSession", { body: { offering, preset: "cpu-small", image: "jupyterlab" } });
        ids.push(r.id);
      }
      const deadline = Date.now() + 180_000;
      let states: ResponseOf<"getSession">[] = [];
      for (;;) {
        states = await Promise.all(ids.map((sessionId) => alice.call("getSession", { params: { sessionId } })));
        const settled = states.filter((s) => s.phase === "Running" || s.phase === "Queued").length;
        if (settled === n && states.filter((s) => s.phase === "Running").length >= Math.min(n - 1, n)) break;
        if (Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      const seconds = (performance.now() - t0) / 1000;
      const perCard = new Map<string, number>();
      for (const s of states)
        if (s.phase === "Running") for (const c of s.gpu_cards ?? ["?"]) perCard.set(c, (perCard.get(c) ?? 0) + 1);
      const pods = (await bed.pods("gpu-a")).filter((p) => p.phase === "Running" && !p.deleting).length;
      for (const sessionId of ids) await alice.call("terminateSession", { params: { sessionId } });
      for (const id of ids) await bed.waitFor(bed.alice, id, (s) => s.phase === "Terminated", "Terminated", 120_000);
      return {
        offering,
        created: n,
        running: states.filter((s) => s.phase === "Running").length,
        queued: states.filter((s) => s.phase === "Queued").length,
        "pods Running (kube-scheduler)": pods,
        "sessions per card": [...perCard.values()].join(" / "),
        "to settled": `${seconds.toFixed(1)} s`,
      };
    };
    const eighth = await measure("h100-1-8", 8 * bedCards + 1);
    const whole = await measure("h100", bedCards + 1);
    console.table([eighth, { ...whole, offering: "h100 (baseline: whole card)" }]);
    console.log(
      `sessions per H100: ${(eighth.running / bedCards).toFixed(1)} at 1/8 against ${(whole.running / bedCards).toFixed(1)} whole (${(eighth.running / Math.max(1, whole.running)).toFixed(1)}×)`,
    );
  } finally {
    await bed.stop();
  }
}
