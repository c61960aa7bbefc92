import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ClusterCapacity } from "../placement/types.ts";
import { planFairPass } from "./pass.ts";
import { chooseReclaim, planReclaims, Reclaimer } from "./reclaim.ts";
import { resolveSettings } from "./shares.ts";
import type { DecayedUsage, FairRequest, Holder, ReclaimInput, ShareTree } from "./types.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";
const MIN = 60_000;
const T0 = Date.parse("2026-11-28T00:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();
const settings = resolveSettings();
const noUsage: DecayedUsage = { orgs: {}, projects: {}, users: {} };
const tree: ShareTree = {
  orgs: [
    { org: "a", quotas: { [H100]: { guaranteed: 4 } } },
    { org: "b", quotas: { [H100]: { guaranteed: 2 } } },
    { org: "c", quotas: { [H100]: { guaranteed: 0 } } },
  ],
};

function aBorrower(key: string, over: Partial<Holder> = {}): Holder {
  return {
    key,
    org: "c",
    project: "p",
    user: "u",
    clusterId: "c1",
    gpuModel: H100,
    cards: 1,
    capacityClass: "borrowed",
    priority: 0,
    startedAt: at(0),
    idle: false,
    ...over,
  };
}

function input(holders: Holder[], over: Partial<ReclaimInput> = {}): ReclaimInput {
  return {
    now: at(60 * MIN),
    settings,
    tree,
    usage: noUsage,
    request: { key: "a/new", gpuModel: H100, cards: 1, eligibleClusters: ["c1"] },
    free: { c1: 0 },
    holders,
    ...over,
  };
}

describe("choosing what to reclaim", () => {
  it("takes an idle borrowed session before an active one", () => {
    const choice = chooseReclaim(input([aBorrower("active"), aBorrower("idle", { idle: true })]));
    expect(choice?.victims.map((v) => v.key)).toEqual(["idle"]);
  });

  it("then the one whose org is most over its fair share", () => {
    const usage: DecayedUsage = { orgs: { b: 100, c: 10 }, projects: {}, users: {} };
    const choice = chooseReclaim(input([aBorrower("c1"), aBorrower("b1", { org: "b" })], { usage }));
    expect(choice?.victims.map((v) => v.key)).toEqual(["b1"]);
  });

  it("then the lowest priority, then the newest", () => {
    const low = chooseReclaim(input([aBorrower("high", { priority: 5 }), aBorrower("low")]));
    expect(low?.victims.map((v) => v.key)).toEqual(["low"]);
    const newest = chooseReclaim(input([aBorrower("old"), aBorrower("new", { startedAt: at(20 * MIN) })]));
    expect(newest?.victims.map((v) => v.key)).toEqual(["new"]);
    // Started in the same second (status times have whole seconds): the one created last, whatever its key.
    const sameSecond = chooseReclaim(
      input([aBorrower("b-later", { createdAt: at(2 * MIN) }), aBorrower("a-earlier", { createdAt: at(1 * MIN) })]),
    );
    expect(sameSecond?.victims.map((v) => v.key)).toEqual(["b-later"]);
  });

  it("never takes one within its minimum runtime, nor a guaranteed one", () => {
    const holders = [
      aBorrower("young", { startedAt: at(55 * MIN) }),
      aBorrower("guaranteed", { capacityClass: "guaranteed" }),
    ];
    expect(chooseReclaim(input(holders))).toBeUndefined();
  });

  it("takes only as much as needed", () => {
    // Needs 2 beyond the 1 free: idle 1-card sessions first would take two, but the idle 2-card one alone does.
    const holders = [
      aBorrower("i1", { idle: true, startedAt: at(30 * MIN) }),
      aBorrower("i2", { idle: true, cards: 2 }),
      aBorrower("a1"),
    ];
    const choice = chooseReclaim(
      input(holders, {
        free: { c1: 1 },
        request: { key: "a/new", gpuModel: H100, cards: 3, eligibleClusters: ["c1"] },
      }),
    );
    expect(choice?.victims.map((v) => v.key)).toEqual(["i2"]);
  });

  it("counts sessions already under notice as room coming, and does not choose them again", () => {
    expect(chooseReclaim(input([aBorrower("noticed", { reclaiming: true }), aBorrower("other")]))).toBeUndefined();
  });

  it("prefers the cluster where fewer active sessions must go", () => {
    const holders = [aBorrower("x-active", { clusterId: "x" }), aBorrower("y-idle", { clusterId: "y", idle: true })];
    const choice = chooseReclaim(
      input(holders, {
        free: { x: 0, y: 0 },
        request: { key: "a/new", gpuModel: H100, cards: 1, eligibleClusters: ["x", "y"] },
      }),
    );
    expect(choice).toMatchObject({ clusterId: "y", victims: [{ key: "y-idle" }] });
  });
});

describe("a pass with reclaim", () => {
  const clusters: ClusterCapacity[] = [
    { clusterId: "c1", placeable: true, models: { [H100]: { total: 8, free: 0, largestNode: 8 } } },
  ];
  const request = (key: string, org: string, over: Partial<FairRequest> = {}): FairRequest => ({
    key,
    org,
    project: "p",
    user: "u",
    gpuModel: H100,
    gpuCount: 1,
    cards: 1,
    mayBorrow: false,
    priority: 0,
    since: at(50 * MIN),
    volumes: [],
    ...over,
  });

  it("reclaims borrowed room for a guaranteed request, and refuses a borrower while nothing is lendable", () => {
    const holders = [
      ...[1, 2, 3, 4, 5, 6].map((i) => aBorrower(`c/${i}`, { idle: i === 6 })),
      aBorrower("b/1", { org: "b", capacityClass: "guaranteed" }),
      aBorrower("b/2", { org: "b", capacityClass: "guaranteed" }),
    ];
    const plan = planFairPass({
      now: at(60 * MIN),
      tree,
      requests: [request("a/1", "a"), request("c/7", "c", { mayBorrow: true })],
      holders,
      usage: noUsage,
      clusters,
      policy: "binpack",
    });
    expect(plan.placed).toEqual([]);
    expect(plan.classes["a/1"]?.kind).toBe("guaranteed");
    expect(plan.reclaims).toEqual([
      { forKey: "a/1", clusterId: "c1", victims: [expect.objectContaining({ key: "c/6" })] },
    ]);
    expect(plan.waiting).toEqual([
      expect.objectContaining({ key: "a/1", position: 1, reason: "NoCapacity" }),
      expect.objectContaining({ key: "c/7", position: 2, reason: "NothingLendable" }),
    ]);
  });

  it("reserves guarantees before lending: an older borrower does not take room a guarantee waits for", () => {
    const holders = [
      ...[1, 2, 3].map((i) => aBorrower(`a/${i}`, { org: "a", capacityClass: "guaranteed" })),
      ...[1, 2, 3, 4].map((i) => aBorrower(`c/${i}`)),
    ];
    const plan = planFairPass({
      now: at(60 * MIN),
      tree,
      requests: [request("c/old", "c", { mayBorrow: true, since: at(0) }), request("a/new", "a")],
      holders,
      usage: noUsage,
      clusters: [{ clusterId: "c1", placeable: true, models: { [H100]: { total: 8, free: 1, largestNode: 8 } } }],
      policy: "binpack",
    });
    expect(plan.placed.map((p) => [p.key, p.capacityClass])).toEqual([["a/new", "guaranteed"]]);
    expect(plan.waiting).toEqual([expect.objectContaining({ key: "c/old", reason: "NothingLendable" })]);
    expect(plan.reclaims).toEqual([]);
  });

  it("places with the capacity class it gave", () => {
    const plan = planFairPass({
      now: at(60 * MIN),
      tree,
      requests: [request("a/1", "a"), request("c/1", "c", { mayBorrow: true })],
      holders: [],
      usage: noUsage,
      clusters: [{ ...clusters[0], models: { [H100]: { total: 8, free: 8, largestNode: 8 } } } as ClusterCapacity],
      policy: "binpack",
    });
    expect(plan.placed.map((p) => [p.key, p.capacityClass])).toEqual([
      ["a/1", "guaranteed"],
      ["c/1", "borrowed"],
    ]);
  });
});

describe("classes fixed at creation, and lending limits, at placement", () => {
  const lending: ShareTree = {
    orgs: [
      { org: "a", quotas: { [H100]: { guaranteed: 6, lendingLimit: 2 } } },
      { org: "c", quotas: { [H100]: { guaranteed: 0 } } },
    ],
  };
  const empty = (free: number): ClusterCapacity[] => [
    { clusterId: "c1", placeable: true, models: { [H100]: { total: 8, free, largestNode: 8 } } },
  ];
  const req = (key: string, org: string, over: Partial<FairRequest> = {}): FairRequest => ({
    key,
    org,
    project: "p",
    user: "u",
    gpuModel: H100,
    gpuCount: 1,
    cards: 1,
    mayBorrow: false,
    priority: 0,
    since: at(50 * MIN),
    volumes: [],
    ...over,
  });

  it("places a borrower only within what the lender lends, though the GPUs are free", () => {
    // 8 free: 2 nobody is guaranteed + 2 of a's 6 it lends = 4 borrowable; a's other 4 stay idle for a.
    const borrowers = [1, 2, 3, 4, 5, 6].map((i) =>
      req(`c/${i}`, "c", { mayBorrow: true, capacityClass: "borrowed", since: at(i) }),
    );
    const plan = planFairPass({
      now: at(60 * MIN),
      tree: lending,
      requests: borrowers,
      holders: [],
      usage: noUsage,
      clusters: empty(8),
      policy: "binpack",
    });
    expect(plan.placed.map((p) => p.key)).toEqual(["c/1", "c/2", "c/3", "c/4"]);
    expect(plan.waiting.map((w) => [w.key, w.reason])).toEqual([
      ["c/5", "NothingLendable"],
      ["c/6", "NothingLendable"],
    ]);
  });

  it("keeps a borrowed session borrowed within its own organization's guarantee, and a guaranteed one guaranteed", () => {
    const plan = planFairPass({
      now: at(60 * MIN),
      tree: lending,
      requests: [
        req("a/borrowed", "a", { mayBorrow: true, capacityClass: "borrowed" }),
        req("a/guaranteed", "a", { mayBorrow: true, capacityClass: "guaranteed", cards: 7, gpuCount: 7 }),
      ],
      holders: [],
      usage: noUsage,
      clusters: empty(8),
      policy: "binpack",
    });
    expect(plan.classes["a/borrowed"]?.kind).toBe("borrowed");
    // Seven is beyond a's guarantee of six: it waits for its guarantee rather than borrow.
    expect(plan.classes["a/guaranteed"]).toMatchObject({ kind: "refused", reason: "OverGuarantee" });
    expect(plan.placed.map((p) => [p.key, p.capacityClass])).toEqual([["a/borrowed", "borrowed"]]);
  });

  it("orders a band by decayed usage: the heavier organization's older request goes after the lighter one's", () => {
    const usage: DecayedUsage = { orgs: { a: 500, c: 1 }, projects: { "a/p": 500, "c/p": 1 }, users: {} };
    const plan = planFairPass({
      now: at(60 * MIN),
      tree: { orgs: [{ org: "a" }, { org: "c" }] },
      requests: [req("a/old", "a", { since: at(0) }), req("c/new", "c", { since: at(55 * MIN) })],
      holders: [],
      usage,
      clusters: empty(1),
      policy: "binpack",
    });
    expect(plan.placed.map((p) => p.key)).toEqual(["c/new"]);
    expect(plan.waiting).toEqual([expect.objectContaining({ key: "a/old", position: 1 })]);
  });
});

describe("one reclaim per blocked need", () => {
  const need = (key: string, cards = 1) => ({ key, gpuModel: H100, cards, eligibleClusters: ["c1"] });
  const borrowers = [1, 2, 3, 4, 5, 6].map((i) => aBorrower(`c/${i}`, { startedAt: at(i * MIN) }));
  const base = { now: at(60 * MIN), settings, tree, usage: noUsage };

  it("gives each blocked request its own victims once, head first, and room free or coming to nobody twice", () => {
    const free = new Map([[`${H100}@c1`, 1]]);
    const first = planReclaims({
      ...base,
      holders: borrowers,
      needs: [need("a/1"), need("a/2"), need("a/3", 2)],
      free,
    });
    // a/1 takes the free GPU; a/2 and a/3 are blocked: one and two victims, the newest first.
    expect(first.map((c) => [c.forKey, c.victims.map((v) => v.key)])).toEqual([
      ["a/2", ["c/6"]],
      ["a/3", ["c/5", "c/4"]],
    ]);
    // The next pass, with those under notice and nothing placed yet, chooses nobody new.
    const noticed = new Set(first.flatMap((c) => c.victims.map((v) => v.key)));
    const holders = borrowers.map((h) => (noticed.has(h.key) ? { ...h, reclaiming: true } : h));
    expect(planReclaims({ ...base, holders, needs: [need("a/1"), need("a/2"), need("a/3", 2)], free })).toEqual([]);
    // A request that joins the queue then is a new blocked need: it gets exactly its own.
    const again = planReclaims({
      ...base,
      holders,
      needs: [need("a/1"), need("a/2"), need("a/3", 2), need("a/4")],
      free,
    });
    expect(again.map((c) => [c.forKey, c.victims.map((v) => v.key)])).toEqual([["a/4", ["c/3"]]]);
  });

  it("reclaims nothing for a request whose room is free", () => {
    const free = new Map([[`${H100}@c1`, 2]]);
    expect(planReclaims({ ...base, holders: borrowers, needs: [need("a/1"), need("a/2")], free })).toEqual([]);
  });
});

// A pass serves its whole queue with one Reclaimer (candidates sorted once per cluster): it must answer
// each request as chooseReclaim would, asked one by one with the earlier victims put under notice.
describe("one reclaimer for a queue", () => {
  const holder = fc.record({
    org: fc.constantFrom("a", "b", "c"),
    clusterId: fc.constantFrom("c1", "c2"),
    cards: fc.constantFrom(0.5, 1, 2),
    capacityClass: fc.constantFrom("borrowed" as const, "borrowed" as const, "guaranteed" as const),
    priority: fc.integer({ min: 0, max: 2 }),
    startedMin: fc.integer({ min: 0, max: 60 }),
    idle: fc.boolean(),
    reclaiming: fc.boolean(),
  });
  const request = fc.record({
    cards: fc.constantFrom(1, 2, 4),
    eligible: fc.constantFrom(["c1"], ["c2"], ["c1", "c2"]),
    free1: fc.constantFrom(0, 0.5, 1),
    free2: fc.constantFrom(0, 1),
  });

  it("chooses what chooseReclaim chooses request by request, each one's victims coming for the next", () => {
    fc.assert(
      fc.property(fc.array(holder, { maxLength: 30 }), fc.array(request, { minLength: 1, maxLength: 12 }), (hs, rs) => {
        const holders = hs.map((h, i) =>
          aBorrower(`h${i}`, {
            org: h.org,
            clusterId: h.clusterId,
            cards: h.cards,
            capacityClass: h.capacityClass,
            priority: h.priority,
            startedAt: at(h.startedMin * MIN),
            idle: h.idle,
            ...(h.reclaiming && h.capacityClass === "borrowed" ? { reclaiming: true } : {}),
          }),
        );
        const usage = { orgs: { a: 3, b: 1, c: 5 }, projects: {}, users: {} };
        const one = new Reclaimer({ now: at(60 * MIN), settings, tree, usage, holders });
        const copies = holders.map((h) => ({ ...h }));
        rs.forEach((r, i) => {
          const req = { key: `r${i}`, gpuModel: H100, cards: r.cards, eligibleClusters: r.eligible };
          const free = { c1: r.free1, c2: r.free2 };
          const alone = chooseReclaim(input(copies, { usage, request: req, free }));
          expect(one.choose(req, free)).toEqual(alone);
          for (const v of alone?.victims ?? []) (copies.find((h) => h.key === v.key) as Holder).reclaiming = true;
          for (const c of ["c1", "c2"])
            expect(one.coming(H100, c)).toBe(
              copies.reduce((s, h) => s + (h.reclaiming && h.clusterId === c ? h.cards : 0), 0),
            );
        });
      }),
      { numRuns: 300, seed: 20261129 },
    );
  });

  it("skips a request no cluster can serve without taking anything, and serves the next", () => {
    const holders = [aBorrower("x", { idle: true }), aBorrower("y")];
    const one = new Reclaimer({ now: at(60 * MIN), settings, tree, usage: noUsage, holders });
    const big = { key: "big", gpuModel: H100, cards: 4, eligibleClusters: ["c1"] };
    expect(one.choose(big, { c1: 0 })).toBeUndefined();
    const small = { key: "small", gpuModel: H100, cards: 1, eligibleClusters: ["c1"] };
    expect(one.choose(small, { c1: 0 })?.victims.map((v) => v.key)).toEqual(["x"]);
    // x's card is coming, and promised to "small": the pass passes free room less what it promised.
    expect(one.choose({ ...small, key: "next" }, { c1: 0 })).toBeUndefined();
    expect(one.choose({ ...small, key: "next" }, { c1: -1 })?.victims.map((v) => v.key)).toEqual(["y"]);
    expect(one.choose({ ...small, key: "last" }, { c1: -2 })).toBeUndefined();
    expect(one.coming(H100, "c1")).toBe(2);
  });
});

// Random traces through the pass loop as the worker will run it: arrivals of three orgs (some opted in to
// borrowing), ends, idleness flipping, reclaim notices with a random grace period, then the pause and a
// resume request. The properties: a victim is always borrowed and past its minimum runtime; the reclaimer is
// guaranteed; and no two runs reclaim each other.
describe("reclaim over random traces", () => {
  type Step =
    | { kind: "arrive"; org: "a" | "b" | "c"; cards: 1 | 2; mayBorrow: boolean }
    | { kind: "end"; pick: number }
    | { kind: "idle"; pick: number }
    | { kind: "tick"; minutes: number };
  const step: fc.Arbitrary<Step> = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant("arrive" as const),
        org: fc.constantFrom("a" as const, "b" as const, "c" as const),
        cards: fc.constantFrom(1 as const, 2 as const),
        mayBorrow: fc.boolean(),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("end" as const), pick: fc.nat() }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("idle" as const), pick: fc.nat() }) },
    {
      weight: 3,
      arbitrary: fc.record({ kind: fc.constant("tick" as const), minutes: fc.integer({ min: 1, max: 20 }) }),
    },
  );

  it("never reclaims a guaranteed session, a young one, or the run that reclaimed it", () => {
    let reclaimed = 0;
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 20, maxLength: 120 }),
        fc.integer({ min: 0, max: 10 }),
        (steps, graceMin) => {
          let now = 0;
          let n = 0;
          const holders: Holder[] = [];
          const pauseAt = new Map<string, number>();
          const waiting: FairRequest[] = [];
          const runOf = new Map<string, number>();
          // "A#2 > B#1": run 2 of A made run 1 of B give its room back.
          const events: { by: string; victim: string }[] = [];
          const run = (key: string) => `${key}#${runOf.get(key) ?? 0}`;

          for (const s of steps) {
            if (s.kind === "arrive") {
              const key = `${s.org}/${n++}`;
              waiting.push({
                key,
                org: s.org,
                project: "p",
                user: "u",
                gpuModel: H100,
                gpuCount: s.cards,
                cards: s.cards,
                mayBorrow: s.mayBorrow,
                priority: 0,
                since: at(now),
                volumes: [],
              });
            } else if (s.kind === "end" && holders.length > 0) {
              const h = holders[s.pick % holders.length] as Holder;
              if (!h.reclaiming) holders.splice(holders.indexOf(h), 1);
            } else if (s.kind === "idle" && holders.length > 0) {
              const h = holders[s.pick % holders.length] as Holder;
              h.idle = !h.idle;
            } else if (s.kind === "tick") now += s.minutes * MIN;

            // Grace periods over: pause (room back) and ask to resume, keeping its place in the queue.
            for (const h of [...holders])
              if (h.reclaiming && (pauseAt.get(h.key) ?? Infinity) <= now) {
                holders.splice(holders.indexOf(h), 1);
                pauseAt.delete(h.key);
                waiting.push({
                  key: h.key,
                  org: h.org,
                  project: "p",
                  user: "u",
                  gpuModel: H100,
                  gpuCount: h.cards,
                  cards: h.cards,
                  mayBorrow: true,
                  priority: 0,
                  since: at(0),
                  volumes: [],
                });
              }

            const used = holders.reduce((x, h) => x + h.cards, 0);
            const plan = planFairPass({
              now: at(now),
              tree,
              requests: waiting,
              holders,
              usage: noUsage,
              clusters: [
                { clusterId: "c1", placeable: true, models: { [H100]: { total: 8, free: 8 - used, largestNode: 8 } } },
              ],
              policy: "binpack",
            });
            for (const p of plan.placed) {
              const r = waiting.splice(
                waiting.findIndex((w) => w.key === p.key),
                1,
              )[0] as FairRequest;
              runOf.set(r.key, (runOf.get(r.key) ?? 0) + 1);
              holders.push({
                key: r.key,
                org: r.org,
                project: "p",
                user: "u",
                clusterId: p.clusterId,
                gpuModel: H100,
                cards: r.cards,
                capacityClass: p.capacityClass,
                priority: 0,
                startedAt: at(now),
                idle: false,
              });
            }
            for (const c of plan.reclaims) {
              expect(plan.classes[c.forKey]?.kind).toBe("guaranteed");
              for (const v of c.victims) {
                const h = holders.find((x) => x.key === v.key) as Holder;
                expect(h.capacityClass).toBe("borrowed");
                expect(h.reclaiming).not.toBe(true);
                expect(now - Date.parse(h.startedAt) + T0).toBeGreaterThanOrEqual(settings.minRuntimeMs);
                h.reclaiming = true;
                pauseAt.set(h.key, now + graceMin * MIN);
                // The reclaimer's run is the one it starts next.
                events.push({ by: `${c.forKey}#${(runOf.get(c.forKey) ?? 0) + 1}`, victim: run(v.key) });
              }
            }
          }
          reclaimed += events.length;
          const pairs = new Set(events.map((e) => `${e.by}>${e.victim}`));
          for (const e of events) expect(pairs.has(`${e.victim}>${e.by}`)).toBe(false);
        },
      ),
      { numRuns: 150, seed: 20261129 },
    );
    // The traces did exercise reclaim.
    expect(reclaimed).toBeGreaterThan(50);
  });
});
