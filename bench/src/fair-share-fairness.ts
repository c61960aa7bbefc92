// Fair share over a simulated week, and what a pass with fair share costs (docs/dev/fair-share.md). Not a
// test: it prints figures, each beside today's placement as the baseline.
//
// 1. Fairness. 64 H100 (2 clusters × 32); three organizations, weights 2:1:1, guarantees 24/16/8 (16 GPUs
//    nobody is guaranteed); physics offers 80 % of the fleet's worth of work, the others 50 % each (180 %
//    in all), so every one wants more than its weighted share. Sessions: 1/2/4 GPUs, lognormal lengths (median 60 min, 8 h cap);
//    half opt in to borrowing; each is idle a random part of the time (30-minute spells). A session that
//    waits 4 hours gives up. One pass a minute: planFairPass (classes, order, reclaim: notice, 10-minute
//    grace, pause, resume ahead of new work; minimum runtime 10 minutes) vs planPlacement alone (priority,
//    then age). Reported: each org's share of GPU-hours against its weighted fair share, reclaims a day,
//    active sessions reclaimed, and of those, how many while idle borrowed sessions there could have given
//    the same room on their own.
// 2. Cost. One pass at 500 nodes × 8 GPUs (5 clusters), 3,400 sessions holding GPUs and 600 waiting from
//    20 orgs × 5 projects × 10 users: computeCapacity + planFairPass vs computeCapacity + planPlacement.
//    p50/p99 wall and CPU per pass.
//
//   node bench/src/fair-share-fairness.ts [--days=7] [--seed=5] [--passes=40] [--quick] [--part=1|2]
//     [--scale=1] (part 2's sizes times this, e.g. 0.2 to profile)
import { cpus, loadavg, totalmem } from "node:os";
import { parseArgs } from "node:util";
import {
  type ClusterCapacity,
  computeCapacity,
  type DecayedUsage,
  type FairRequest,
  type Holder,
  type Holding,
  type InventoryNodeView,
  type PlacementRequest,
  planFairPass,
  planPlacement,
  type ShareTree,
  seededRandom,
} from "@berth/controllers";
import { fairnessRow, type WeekResult } from "./fair-share-fairness/shares.ts";
import { DAY, H100, HOUR, MIN, type Sess, workload } from "./fair-share-fairness/workload.ts";
import { upperPercentile } from "./kit/percentile.ts";

const { values } = parseArgs({
  options: {
    days: { type: "string", default: "7" },
    seed: { type: "string", default: "5" },
    passes: { type: "string", default: "40" },
    quick: { type: "boolean", default: false },
    part: { type: "string", default: "all" },
    scale: { type: "string", default: "1" },
  },
});
const QUICK = values.quick;
const DAYS = QUICK ? 2 : Number(values.days);
const SEED = Number(values.seed);
const PASSES = QUICK ? 15 : Number(values.passes);
const PART = values.part;
const SCALE = Number(values.scale);

const T0 = Date.parse("2026-11-02T00:00:00.000Z");
const iso = (t: number) => new Date(T0 + t).toISOString();
const HALF_LIFE = 7 * DAY;
const GRACE = 10 * MIN;
const PATIENCE = 4 * HOUR;

console.log(
  `machine: ${cpus().length} CPUs, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);

const tree: ShareTree = {
  orgs: [
    { org: "physics", weight: 2, quotas: { [H100]: { guaranteed: 24 } } },
    { org: "biology", weight: 1, quotas: { [H100]: { guaranteed: 16 } } },
    { org: "nlp", weight: 1, quotas: { [H100]: { guaranteed: 8 } } },
  ],
};

function week(fair: boolean): WeekResult {
  const sessions = workload(SEED, DAYS);
  const r = seededRandom(SEED + 1);
  let next = 0;
  let queue: Sess[] = [];
  let running: Sess[] = [];
  const gpuHours: Record<string, number> = { physics: 0, biology: 0, nlp: 0 };
  let usage: DecayedUsage = { orgs: {}, projects: {}, users: {} };
  const res: WeekResult = {
    gpuHours,
    reclaims: 0,
    activeReclaimed: 0,
    activeWhileIdleAvailable: 0,
    guaranteedWaitsMin: [],
    passCpuMs: 0,
    gaveUp: 0,
  };
  for (let t = 0; t < DAYS * DAY; t += MIN) {
    // Usage: decay a minute, add the minute's card-hours.
    const f = 2 ** (-MIN / HALF_LIFE);
    const decay = (m: Record<string, number>) => {
      for (const k of Object.keys(m)) m[k] = (m[k] as number) * f;
    };
    decay(usage.orgs);
    decay(usage.projects);
    decay(usage.users);
    for (const s of running) {
      const h = s.gpus / 60;
      gpuHours[s.org] = (gpuHours[s.org] ?? 0) + h;
      usage.orgs[s.org] = (usage.orgs[s.org] ?? 0) + h;
      usage.projects[`${s.org}/p`] = (usage.projects[`${s.org}/p`] ?? 0) + h;
      usage.users[`${s.org}/p/${s.user}`] = (usage.users[`${s.org}/p/${s.user}`] ?? 0) + h;
      s.left -= MIN;
      if (t % (30 * MIN) === 0) s.idle = r() < s.idleShare;
    }
    // Ends, pauses after a notice, give-ups.
    running = running.filter((s) => {
      if (s.pauseAt !== undefined && s.pauseAt <= t) {
        s.pauseAt = undefined;
        s.start = undefined;
        s.cluster = undefined;
        queue.push(s); // resumes keep their old `since`: ahead of new work
        return false;
      }
      return s.left > 0;
    });
    queue = queue.filter((s) => {
      const gone = s.start === undefined && s.since === s.arrival && t - s.arrival > PATIENCE;
      if (gone) res.gaveUp++;
      return !gone;
    });
    while (next < sessions.length && (sessions[next] as Sess).arrival <= t) queue.push(sessions[next++] as Sess);
    if (queue.length === 0) continue;

    const clusters: ClusterCapacity[] = ["gpu-a", "gpu-b"].map((id) => {
      const used = running.filter((s) => s.cluster === id).reduce((x, s) => x + s.gpus, 0);
      return { clusterId: id, placeable: true, models: { [H100]: { total: 32, free: 32 - used, largestNode: 8 } } };
    });
    const request = (s: Sess): FairRequest => ({
      key: s.key,
      org: s.org,
      project: "p",
      user: s.user,
      gpuModel: H100,
      gpuCount: s.gpus,
      cards: s.gpus,
      mayBorrow: s.mayBorrow || s.capacityClass === "borrowed",
      priority: 0,
      since: iso(s.since),
      volumes: [],
    });
    const c0 = process.cpuUsage();
    let placed: { key: string; clusterId: string; capacityClass: "guaranteed" | "borrowed" }[];
    if (fair) {
      const holders: Holder[] = running.map((s) => ({
        key: s.key,
        org: s.org,
        project: "p",
        user: s.user,
        clusterId: s.cluster as string,
        gpuModel: H100,
        cards: s.gpus,
        capacityClass: s.capacityClass ?? "guaranteed",
        priority: 0,
        startedAt: iso(s.start as number),
        idle: s.idle === true,
        ...(s.pauseAt !== undefined ? { reclaiming: true } : {}),
      }));
      const plan = planFairPass({
        now: iso(t),
        tree,
        settings: { halfLifeMs: HALF_LIFE },
        requests: queue.map(request),
        holders,
        usage,
        clusters,
        policy: "binpack",
      });
      placed = plan.placed;
      for (const c of plan.reclaims) {
        const idleThere = running.filter(
          (s) =>
            s.cluster === c.clusterId &&
            s.capacityClass === "borrowed" &&
            s.idle &&
            s.pauseAt === undefined &&
            t - (s.start as number) >= 10 * MIN,
        );
        for (const v of c.victims) {
          const s = running.find((x) => x.key === v.key) as Sess;
          res.reclaims++;
          if (!s.idle) {
            res.activeReclaimed++;
            // The idle borrowed sessions there could have given the same room on their own.
            const need = c.victims.reduce((x, y) => x + y.cards, 0);
            if (idleThere.reduce((x, y) => x + y.gpus, 0) >= need) res.activeWhileIdleAvailable++;
          }
          s.pauseAt = t + GRACE;
        }
      }
    } else {
      placed = planPlacement({ requests: queue.map(request), clusters, policy: "binpack" }).placed.map((p) => ({
        ...p,
        capacityClass: "guaranteed" as const,
      }));
    }
    const c1 = process.cpuUsage(c0);
    res.passCpuMs += (c1.user + c1.system) / 1000;
    const byKey = new Map(queue.map((s) => [s.key, s]));
    for (const p of placed) {
      const s = byKey.get(p.key) as Sess;
      if (s.since === s.arrival && s.start === undefined && p.capacityClass === "guaranteed")
        res.guaranteedWaitsMin.push((t - s.arrival) / MIN);
      s.start = t;
      s.cluster = p.clusterId;
      s.capacityClass = p.capacityClass;
      s.idle = false;
      running.push(s);
    }
    const gone = new Set(placed.map((p) => p.key));
    queue = queue.filter((s) => !gone.has(s.key));
  }
  usage = { orgs: {}, projects: {}, users: {} };
  return res;
}

if (PART !== "2") fairness();
if (PART !== "1") cost();

function fairness() {
  console.log(
    `\n1. fairness over ${DAYS} simulated days, 64 H100, weights physics 2 : biology 1 : nlp 1, seed ${SEED}`,
  );
  const runs = { "fair share (planFairPass)": week(true), "today (planPlacement)": week(false) };
  const rows: Record<string, Record<string, string>> = {};
  for (const [label, w] of Object.entries(runs)) rows[label] = fairnessRow(w, DAYS);
  console.table(rows);
}

// ---------------------------------------------------------------- 2. cost ----------------------------
function cost() {
  const NODES = Math.round(500 * SCALE);
  const HOLDERS = Math.round(3400 * SCALE);
  const WAITING = Math.round(600 * SCALE);
  const PER_CLUSTER = Math.round(780 * SCALE);
  console.log(
    `\n2. one pass at ${NODES} nodes × 8 H100 (5 clusters), ${HOLDERS} sessions holding GPUs, ${WAITING} waiting`,
  );
  const rc = seededRandom(SEED + 2);
  const CLUSTERS = ["c0", "c1", "c2", "c3", "c4"];
  const nodes: InventoryNodeView[] = Array.from({ length: NODES }, (_, i) => ({
    clusterId: CLUSTERS[i % 5] as string,
    name: `n${i}`,
    gpuModel: H100,
    gpuAllocatable: 8,
    gpuInUse: 0,
    schedulable: true,
    ready: true,
  }));
  const orgs = Array.from({ length: 20 }, (_, i) => `org${i}`);
  const bigTree: ShareTree = {
    orgs: orgs.map((org, i) => ({
      org,
      weight: 1 + (i % 3),
      quotas: { [H100]: { guaranteed: Math.round(150 * SCALE), borrowingLimit: Math.round(400 * SCALE) } },
      projects: Array.from({ length: 5 }, (_, j) => ({ project: `p${j}`, weight: 1 + (j % 2) })),
    })),
  };
  const owner = () => ({
    org: orgs[Math.floor(rc() * 20)] as string,
    project: `p${Math.floor(rc() * 5)}`,
    user: `u${Math.floor(rc() * 10)}`,
  });
  const holders: Holder[] = [];
  const holdings: Holding[] = [];
  const perCluster = new Map<string, number>();
  // 3,400 sessions of 1 or 2 GPUs (1.1 on average) fill 3,740 of the 3,900 GPUs the clusters hold at most.
  // A full cluster passes its session to the next one with room (round robin alone spun forever on a full one).
  while (holders.length < HOLDERS) {
    const o = owner();
    const gpus = rc() < 0.9 ? 1 : 2;
    const start = holders.length % 5;
    const at = [0, 1, 2, 3, 4].map((d) => CLUSTERS[(start + d) % 5] as string);
    const clusterId = at.find((c) => (perCluster.get(c) ?? 0) + gpus <= PER_CLUSTER);
    if (!clusterId) break;
    perCluster.set(clusterId, (perCluster.get(clusterId) ?? 0) + gpus);
    holders.push({
      key: `h${holders.length}`,
      ...o,
      clusterId,
      gpuModel: H100,
      cards: gpus,
      capacityClass: rc() < 0.7 ? "guaranteed" : "borrowed",
      priority: 0,
      startedAt: iso(-Math.floor(rc() * 5 * HOUR)),
      idle: rc() < 0.3,
    });
    holdings.push({ clusterId, gpuModel: H100, gpuCount: gpus });
  }
  const waiting: FairRequest[] = Array.from({ length: WAITING }, (_, i) => {
    const gpus = [1, 1, 2, 4, 8][Math.floor(rc() * 5)] as number;
    return {
      key: `w${i}`,
      ...owner(),
      gpuModel: H100,
      gpuCount: gpus,
      cards: gpus,
      mayBorrow: rc() < 0.5,
      priority: 0,
      since: iso(-Math.floor(rc() * 3 * HOUR)),
      volumes: [],
    };
  });
  console.log(`generated ${holders.length} holders, ${[...perCluster.values()].join("/")} GPUs per cluster`);
  const bigUsage: DecayedUsage = { orgs: {}, projects: {}, users: {} };
  for (const h of holders) {
    bigUsage.orgs[h.org] = (bigUsage.orgs[h.org] ?? 0) + h.cards * 10;
    bigUsage.projects[`${h.org}/${h.project}`] = (bigUsage.projects[`${h.org}/${h.project}`] ?? 0) + h.cards * 10;
    bigUsage.users[`${h.org}/${h.project}/${h.user}`] =
      (bigUsage.users[`${h.org}/${h.project}/${h.user}`] ?? 0) + h.cards * 10;
  }
  const views = CLUSTERS.map((clusterId) => ({ clusterId, placeable: true }));

  function measure(label: string, pass: () => unknown) {
    pass(); // warm
    const wall: number[] = [];
    const c0 = process.cpuUsage();
    for (let i = 0; i < PASSES; i++) {
      const s = performance.now();
      pass();
      wall.push(performance.now() - s);
    }
    const c = process.cpuUsage(c0);
    return {
      label,
      "p50 ms": upperPercentile(wall, 50, 0).toFixed(1),
      "p99 ms": upperPercentile(wall, 99, 0).toFixed(1),
      "CPU ms/pass": ((c.user + c.system) / 1000 / PASSES).toFixed(1),
    };
  }
  const baseline = measure("today: computeCapacity + planPlacement", () =>
    planPlacement({
      requests: waiting as PlacementRequest[],
      clusters: computeCapacity(views, nodes, holdings),
      policy: "binpack",
    }),
  );
  const withFair = measure("fair share: computeCapacity + planFairPass", () =>
    planFairPass({
      now: iso(0),
      tree: bigTree,
      requests: waiting,
      holders,
      usage: bigUsage,
      clusters: computeCapacity(views, nodes, holdings),
      policy: "binpack",
    }),
  );
  console.table([baseline, withFair]);
  console.log(
    `ratio (fair share ÷ today), CPU per pass: ${(Number(withFair["CPU ms/pass"]) / Number(baseline["CPU ms/pass"])).toFixed(1)}×`,
  );
}
