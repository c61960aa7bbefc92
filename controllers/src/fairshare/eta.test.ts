import { describe, expect, it } from "vitest";
import type { ClusterCapacity, PlacementRequest } from "../placement/types.ts";
import { estimateQueue, kaplanMeierQuantiles, lognormalFit, seededRandom } from "./eta.ts";
import type { EtaInput, EtaRunning, EtaShare, LengthSample } from "./eta-types.ts";
import { planFairPass } from "./pass.ts";
import { resolveSettings } from "./shares.ts";
import type { FairRequest, Holder, ShareTree } from "./types.ts";
import { fairComparator, scoreRequests } from "./usage.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";
const L4 = "NVIDIA-L4";
const MIN = 60_000;
const T0 = Date.parse("2026-11-28T12:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();

function aRequest(key: string, over: Partial<PlacementRequest> = {}): PlacementRequest {
  return { key, gpuModel: H100, gpuCount: 1, priority: 0, since: at(-MIN), volumes: [], ...over };
}
function aRunning(key: string, over: Partial<EtaRunning> = {}): EtaRunning {
  return { key, clusterId: "c1", gpuModel: H100, gpuCount: 1, startedAt: at(-30 * MIN), ...over };
}
function cluster(id: string, total: number, free: number): ClusterCapacity {
  return { clusterId: id, placeable: true, models: { [H100]: { total, free, largestNode: total } } };
}
/** Every finished run lasted exactly `ms`: the simulation becomes exact arithmetic. */
const constant = (ms: number, n = 40): LengthSample[] =>
  Array.from({ length: n }, () => ({ gpuModel: H100, cards: 1, lengthMs: ms }));

function input(over: Partial<EtaInput>): EtaInput {
  return {
    now: at(0),
    waiting: [],
    running: [],
    clusters: [cluster("c1", 2, 0)],
    policy: "binpack",
    history: constant(60 * MIN),
    recentStarts: [],
    // Lengths exactly as seen: the arithmetic below stays exact (the kernel and the fit have their own tests).
    lengthFit: "empirical",
    lengthKernel: 0,
    ...over,
  };
}

const byKey = (etas: ReturnType<typeof estimateQueue>) => new Map(etas.map((e) => [e.key, e]));

describe("the queue ETA by simulation", () => {
  it("replays placement forward: room comes back as running sessions end at their learned length", () => {
    const etas = byKey(
      estimateQueue(
        input({
          running: [aRunning("r1"), aRunning("r2", { startedAt: at(-50 * MIN) })],
          waiting: [aRequest("w1"), aRequest("w2", { since: at(0) }), aRequest("w3", { since: at(1) })],
        }),
      ),
    );
    expect(etas.get("w1")).toMatchObject({ method: "simulation", p50Ms: 10 * MIN, reason: "NoCapacity" });
    expect(etas.get("w2")?.p50Ms).toBe(30 * MIN);
    expect(etas.get("w3")?.p50Ms).toBe(70 * MIN);
    expect(etas.get("w1")?.message).toBe("starts in about 10 min (10 min–10 min)");
    expect(etas.get("w1")?.perCluster).toEqual([{ clusterId: "c1", share: 1, p50Ms: 10 * MIN, p90Ms: 10 * MIN }]);
  });

  it("spreads p10..p90 when lengths vary, and is the same for the same seed", () => {
    const history = Array.from({ length: 60 }, (_, i) => ({ gpuModel: H100, cards: 1, lengthMs: (40 + i * 2) * MIN }));
    const i = input({ running: [aRunning("r1"), aRunning("r2")], waiting: [aRequest("w1")], history, seed: 7 });
    const [a] = estimateQueue(i);
    const [b] = estimateQueue(i);
    expect(a).toEqual(b);
    expect(a?.p10Ms).toBeLessThan(a?.p50Ms as number);
    expect(a?.p50Ms).toBeLessThan(a?.p90Ms as number);
  });

  it("smooths the learned lengths with a lognormal kernel: the band covers lengths not seen", () => {
    const i = input({
      running: [aRunning("r1", { startedAt: at(-50 * MIN) }), aRunning("r2", { startedAt: at(-50 * MIN) })],
      waiting: [aRequest("w1")],
      samples: 100,
      seed: 3,
    });
    const [seen] = estimateQueue(i);
    expect(seen).toMatchObject({ p10Ms: 10 * MIN, p90Ms: 10 * MIN });
    const [smooth] = estimateQueue({ ...i, lengthKernel: 0.5 });
    expect(smooth).toEqual(estimateQueue({ ...i, lengthKernel: 0.5 })[0]);
    // Every finished run lasted 60 min; with the kernel, both sessions (50 min in) end between 50 and
    // well past 60, so the first of them often ends before 10 min from now and sometimes after.
    expect(smooth?.p10Ms).toBeLessThan(10 * MIN);
    expect(smooth?.p90Ms).toBeGreaterThan(10 * MIN);
  });

  it("draws from a lognormal fitted to the finished runs when asked, past what a session has run", () => {
    // Finished runs of 30, 60 and 120 min: a fit with median 60 min. Both sessions ran 50 min already.
    const history = [30, 60, 120].flatMap((m) =>
      Array.from({ length: 10 }, () => ({ gpuModel: H100, cards: 1, lengthMs: m * MIN })),
    );
    const i = input({
      running: [aRunning("r1", { startedAt: at(-50 * MIN) }), aRunning("r2", { startedAt: at(-50 * MIN) })],
      waiting: [aRequest("w1")],
      history,
      samples: 100,
      seed: 3,
      lengthFit: "lognormal",
    });
    const [fit] = estimateQueue(i);
    expect(fit).toEqual(estimateQueue(i)[0]);
    expect(fit?.method).toBe("simulation");
    // No run is drawn shorter than what it has run: the first of the two ends after now, and the band
    // spreads over lengths no finished run had (between 30 and 60, 60 and 120 min).
    expect(fit?.p10Ms).toBeGreaterThan(0);
    expect(fit?.p10Ms).toBeLessThan(fit?.p90Ms as number);
    expect([10, 70].map((m) => m * MIN)).not.toContain(fit?.p50Ms);
  });

  it("caps a running session's length by its time limit and its idle deadline", () => {
    const etas = byKey(
      estimateQueue(
        input({
          running: [
            aRunning("limited", { maxRuntimeMs: 35 * MIN }),
            aRunning("idle", { idleSince: at(-20 * MIN), idleTimeoutMs: 25 * MIN }),
          ],
          waiting: [aRequest("w1"), aRequest("w2", { since: at(0) })],
        }),
      ),
    );
    expect(etas.get("w1")?.p50Ms).toBe(5 * MIN);
    expect(etas.get("w2")?.p50Ms).toBe(5 * MIN);
  });

  it("plans with maximum lengths when asked (the Slurm-style baseline)", () => {
    const [eta] = estimateQueue(
      input({
        running: [aRunning("r1", { maxRuntimeMs: 8 * 60 * MIN }), aRunning("r2", { maxRuntimeMs: 8 * 60 * MIN })],
        waiting: [aRequest("w1")],
        lengths: "max",
      }),
    );
    expect(eta?.p50Ms).toBe(7.5 * 60 * MIN);
  });

  it("is infinite, naming why, when nothing in the fleet can ever fit it", () => {
    const [eta] = estimateQueue(input({ waiting: [aRequest("big", { gpuCount: 4 })] }));
    expect(eta).toMatchObject({
      method: "never",
      p50Ms: Number.POSITIVE_INFINITY,
      reason: "NoMatchingGpuModel",
      message: `cannot start while no cluster of the fleet offers 4 × ${H100}`,
    });
  });

  it("names the pinned cluster that is not accepting sessions", () => {
    const down = { ...cluster("c2", 8, 8), placeable: false };
    const [eta] = estimateQueue(
      input({ clusters: [cluster("c1", 2, 0), down], waiting: [aRequest("w", { clusterPin: "c2" })] }),
    );
    expect(eta?.message).toBe("cannot start while cluster c2 is not accepting sessions");
  });

  it("hints at a smaller tier that would start sooner", () => {
    const clusters: ClusterCapacity[] = [
      cluster("c1", 4, 1),
      { clusterId: "c2", placeable: true, models: { [L4]: { total: 2, free: 2, largestNode: 2 } } },
    ];
    const history = [
      ...constant(120 * MIN),
      ...Array.from({ length: 40 }, () => ({ gpuModel: L4, cards: 1, lengthMs: 60 * MIN })),
    ];
    const [eta] = estimateQueue(
      input({
        clusters,
        history,
        running: [aRunning("r1", { gpuCount: 3 })],
        waiting: [aRequest("w", { gpuCount: 4 })],
        alternatives: { w: [{ label: "a 1 × L4 tier", request: aRequest("w", { gpuModel: L4 }) }] },
      }),
    );
    expect(eta?.p50Ms).toBe(90 * MIN);
    expect(eta?.hint).toEqual({
      label: "a 1 × L4 tier",
      p50Ms: 0,
      message: "a 1 × L4 tier would likely start in 0 min instead of 1.5 h",
    });
  });

  it("falls back to depth ÷ recent admission rate when history is thin", () => {
    // 6 starts in 55 minutes, third in line: the median of the wait for the third start, about 25 minutes.
    const recentStarts = [5, 15, 25, 35, 45, 55].map((m) => at(-m * MIN - 1));
    const etas = estimateQueue(
      input({
        history: constant(60 * MIN, 5),
        recentStarts,
        running: [aRunning("r1"), aRunning("r2")],
        waiting: [aRequest("w1"), aRequest("w2", { since: at(0) }), aRequest("w3", { since: at(1) })],
      }),
    );
    const w3 = etas[2];
    expect(w3?.method).toBe("throughput");
    expect((w3?.p50Ms as number) / MIN).toBeGreaterThan(20);
    expect((w3?.p50Ms as number) / MIN).toBeLessThan(35);
    expect(w3?.p10Ms).toBeLessThan(w3?.p50Ms as number);
    expect(w3?.p90Ms).toBeGreaterThan(w3?.p50Ms as number);
  });
});

describe("the length fit reads running sessions as lengths in progress", () => {
  it("gives plain quantiles without censoring, and later ones when runs are still going", () => {
    const seen = [10, 20, 30, 40, 50, 60, 70, 80];
    expect(kaplanMeierQuantiles(seen, [], [0.25, 0.5, 0.75])).toEqual([20, 40, 60]);
    // Four more runs, each past 45 so far: they are longer than 45, so the median moves past it.
    expect(kaplanMeierQuantiles(seen, [45, 45, 45, 45], [0.25, 0.5, 0.75])).toEqual([30, 50, 70]);
    // Half of them still going: the data never reach half ended.
    expect(kaplanMeierQuantiles([10, 20], [30, 30, 30], [0.25, 0.5])).toEqual([20, Number.NaN]);
    // At a tie the length seen ends first: the run still going at 40 was at risk then.
    expect(kaplanMeierQuantiles([40], [40], [0.5])).toEqual([40]);
  });

  it("fits the cohort started since the oldest finished run ended, running ones censored", () => {
    // Finished: 20 runs of 30 min ended over the last 95 min, 10 of 60 min over the last 27. Running: 20
    // sessions started 70 min ago, still going. Finished runs alone put the median at 30 min; in the
    // cohort started since the oldest of them ended (14 + 10 ended, 20 going), more than half last 60.
    const now = T0;
    const ended = [
      ...Array.from({ length: 20 }, (_, i) => ({ lengthMs: 30 * MIN, endedAt: now - i * 5 * MIN })),
      ...Array.from({ length: 10 }, (_, i) => ({ lengthMs: 60 * MIN, endedAt: now - i * 3 * MIN })),
    ];
    const sorted = ended.map((e) => e.lengthMs).sort((a, b) => a - b);
    const open = Array.from({ length: 20 }, () => ({
      gpuModel: H100,
      cards: 1,
      startedAt: now - 70 * MIN,
      elapsedMs: 70 * MIN,
    }));
    const bare = lognormalFit(sorted, ended, []);
    expect(Math.exp(bare.mu) / MIN).toBeCloseTo(30);
    const censored = lognormalFit(sorted, ended, open);
    expect(Math.exp(censored.mu) / MIN).toBeCloseTo(60);
    // No quarter of it runs past 70 min yet: σ comes from the lower quartile and the median.
    expect(censored.sigma).toBeCloseTo(Math.log(2) / 0.6745);
    // Sessions running since before the oldest finished run ended belong to an older cohort: left out.
    const old = open.map((o) => ({ ...o, startedAt: now - 200 * MIN, elapsedMs: 200 * MIN }));
    expect(Math.exp(lognormalFit(sorted, ended, old).mu) / MIN).toBeCloseTo(30);
    // Without end times there is no cohort: the finished runs as they are.
    const undated = ended.map((e) => ({ ...e, endedAt: Number.NaN }));
    expect(lognormalFit(sorted, undated, open)).toEqual(bare);
  });

  it("is the default: a queue behind sessions running long waits longer than finished runs alone say", () => {
    // 40 finished runs of 20–40 min ended in the last 40 minutes; both GPUs are held by sessions started
    // 35 min ago, and eight more sessions of the same cohort still run elsewhere (another cluster).
    const history: LengthSample[] = Array.from({ length: 40 }, (_, i) => ({
      gpuModel: H100,
      cards: 1,
      lengthMs: (20 + (i % 21)) * MIN,
      endedAt: at(-i * MIN),
    }));
    const elsewhere = Array.from({ length: 8 }, (_, i) =>
      aRunning(`o${i}`, { clusterId: "c2", startedAt: at(-35 * MIN) }),
    );
    const i = input({
      clusters: [cluster("c1", 2, 0), cluster("c2", 8, 0)],
      running: [
        aRunning("r1", { startedAt: at(-35 * MIN) }),
        aRunning("r2", { startedAt: at(-35 * MIN) }),
        ...elsewhere,
      ],
      waiting: [aRequest("w1", { clusterPin: "c1" })],
      history,
      samples: 64,
      seed: 5,
    });
    const { lengthFit: _, ...byDefault } = i;
    const [withRunning] = estimateQueue(byDefault);
    const [finishedOnly] = estimateQueue({ ...byDefault, running: i.running.slice(0, 2) });
    expect(withRunning?.method).toBe("simulation");
    expect(withRunning?.p50Ms).toBeGreaterThan(finishedOnly?.p50Ms as number);
    // Neither ends a run before now: each length is drawn past what it has run.
    expect(finishedOnly?.p10Ms).toBeGreaterThan(0);
  });
});

describe("the queue ETA applies fair share's admission, as the worker's pass does", () => {
  const side = (org: string, capacityClass: EtaShare["capacityClass"], cards = 1): EtaShare => ({
    org,
    project: "",
    user: `${org}-user`,
    cards,
    capacityClass,
  });
  const tree = (physics: object, biology: object = {}): ShareTree => ({
    orgs: [
      { org: "physics", quotas: { [H100]: { guaranteed: 2, ...physics } } },
      { org: "biology", quotas: { [H100]: { guaranteed: 2, ...biology } } },
    ],
  });

  it("starts a borrowed request only once its organization's borrowing is back under the limit", () => {
    // 4 GPUs, 1 free: physics borrows 1 (its limit) until +30 min, biology holds its 2 until +50 min.
    const base = input({
      clusters: [cluster("c1", 4, 1)],
      running: [
        aRunning("p-borrowed", { startedAt: at(-30 * MIN) }),
        aRunning("b1", { startedAt: at(-10 * MIN), gpuCount: 2 }),
      ],
      waiting: [aRequest("w")],
    });
    const sessions = { "p-borrowed": side("physics", "borrowed"), b1: side("biology", "guaranteed", 2) };
    const [asGuaranteed] = estimateQueue({
      ...base,
      fairShare: { tree: tree({ borrowingLimit: 1 }), sessions: { ...sessions, w: side("physics", "guaranteed") } },
    });
    expect(asGuaranteed).toMatchObject({ p50Ms: 0, reason: "Placed" });
    const [asBorrowed] = estimateQueue({
      ...base,
      fairShare: { tree: tree({ borrowingLimit: 1 }), sessions: { ...sessions, w: side("physics", "borrowed") } },
    });
    expect(asBorrowed).toMatchObject({ method: "simulation", p50Ms: 30 * MIN, reason: "OverBorrowingLimit" });
  });

  it("is infinite, naming the limit, for a borrowed request larger than its borrowing limit", () => {
    const [eta] = estimateQueue(
      input({
        clusters: [cluster("c1", 4, 4)],
        waiting: [aRequest("w", { gpuCount: 2 })],
        fairShare: { tree: tree({ borrowingLimit: 1 }), sessions: { w: side("physics", "borrowed", 2) } },
      }),
    );
    expect(eta).toMatchObject({ method: "never", p50Ms: Number.POSITIVE_INFINITY, reason: "OverBorrowingLimit" });
    expect(eta?.message).toMatch(/^cannot start while physics borrows 0 × .* of its limit 1/);
  });

  it("waits for lendable room: biology lends nothing, physics' own guarantee frees at +20 min", () => {
    // 2 of 4 GPUs free all along (biology's idle guarantee), yet biology lends none of it.
    const [eta] = estimateQueue(
      input({
        clusters: [cluster("c1", 4, 2)],
        running: [aRunning("p1", { startedAt: at(-40 * MIN), gpuCount: 2 })],
        waiting: [aRequest("w")],
        fairShare: {
          tree: tree({}, { lendingLimit: 0 }),
          sessions: { p1: side("physics", "guaranteed", 2), w: side("physics", "borrowed") },
        },
      }),
    );
    expect(eta).toMatchObject({ method: "simulation", p50Ms: 20 * MIN, reason: "NothingLendable" });
  });

  it("says 'starts now' for exactly what the worker's pass places, and the pass's reason for the others", () => {
    const rand = seededRandom(11);
    const int = (n: number) => Math.floor(rand() * n);
    const orgs = ["physics", "biology"];
    for (let round = 0; round < 60; round++) {
      const tree: ShareTree = {
        orgs: orgs.map((org) => {
          const guaranteed = int(5);
          return {
            org,
            quotas: {
              [H100]: {
                guaranteed,
                ...(rand() < 0.5 ? { borrowingLimit: int(4) } : {}),
                ...(rand() < 0.5 ? { lendingLimit: int(guaranteed + 1) } : {}),
              },
            },
          };
        }),
      };
      const holders: Holder[] = [];
      let used = 0;
      for (let i = int(5); i > 0; i--) {
        const cards = 1 + int(2);
        if (used + cards > 8) break;
        used += cards;
        holders.push({
          key: `h${i}`,
          clusterId: "c1",
          gpuModel: H100,
          cards,
          capacityClass: rand() < 0.5 ? "borrowed" : "guaranteed",
          priority: 0,
          startedAt: at(-int(50) * MIN),
          idle: false,
          org: orgs[int(2)] as string,
          project: "",
          user: "u",
        });
      }
      const requests: FairRequest[] = Array.from({ length: 1 + int(5) }, (_, i) => {
        const capacityClass = rand() < 0.5 ? "borrowed" : "guaranteed";
        return {
          ...aRequest(`w${i}`, { gpuCount: 1 + int(3), since: at(-int(30) * MIN) }),
          org: orgs[int(2)] as string,
          project: "",
          user: "u",
          cards: 0,
          mayBorrow: capacityClass === "borrowed",
          capacityClass,
        };
      });
      for (const r of requests) r.cards = r.gpuCount;
      const clusters = [cluster("c1", 8, 8 - used)];
      const usage = { orgs: {}, projects: {}, users: {} };
      const pass = planFairPass({ now: at(0), tree, usage, requests, holders, clusters, policy: "binpack" });
      const etas = estimateQueue(
        input({
          clusters,
          running: holders.map((h) => aRunning(h.key, { gpuCount: h.cards, startedAt: h.startedAt })),
          waiting: requests,
          compare: fairComparator(scoreRequests(tree, usage, requests, at(0), resolveSettings())),
          fairShare: {
            tree,
            sessions: Object.fromEntries([...holders, ...requests].map((x) => [x.key, x as EtaShare])),
          },
          samples: 2,
        }),
      );
      const placed = new Set(pass.placed.map((p) => p.key));
      expect(new Set(etas.filter((e) => e.reason === "Placed").map((e) => e.key)), `round ${round}`).toEqual(placed);
      const why = new Map(pass.waiting.map((w) => [w.key, w.reason]));
      for (const e of etas.filter((x) => !placed.has(x.key) && x.method !== "never"))
        expect(e.reason, `round ${round}, ${e.key}`).toBe(why.get(e.key));
    }
  });
});

describe("the queue ETA expects new arrivals that rank ahead", () => {
  // One GPU, busy until +10 min; every run lasts 60 min. w waits with score 0.
  const base = input({
    clusters: [cluster("c1", 1, 0)],
    running: [aRunning("r1", { startedAt: at(-50 * MIN) })],
    waiting: [aRequest("w")],
    samples: 40,
  });
  const stream = (score: number) => ({
    scores: { w: 0 },
    agingPerMs: 1 / MIN,
    streams: [{ ratePerMs: 1 / (5 * MIN), score, shapes: [{ gpuModel: H100, gpuCount: 1, priority: 0, volumes: [] }] }],
  });

  it("starts later when a lighter owner's requests keep arriving ahead, and as before when theirs rank behind", () => {
    const [alone] = estimateQueue(base);
    expect(alone?.p50Ms).toBe(10 * MIN);
    // Score 200: an arrival in the next 200 min goes ahead of w (w ages one point a minute more).
    const [pushed] = estimateQueue({ ...base, arrivals: stream(200) });
    expect(pushed?.p50Ms).toBeGreaterThan(10 * MIN);
    expect(pushed?.p90Ms).toBeGreaterThan(pushed?.p50Ms as number);
    // Score −5: every arrival ranks behind w, which then starts as it would alone.
    expect(estimateQueue({ ...base, arrivals: stream(-5) })[0]).toMatchObject({ p10Ms: 10 * MIN, p90Ms: 10 * MIN });
  });
});
