import { describe, expect, it } from "vitest";
import type { ClusterCapacity } from "../placement/types.ts";
import { planFairPass } from "./pass.ts";
import { resolveSettings } from "./shares.ts";
import type { DecayedUsage, FairRequest, Holder, ShareTree } from "./types.ts";
import { decayedUsage, fairComparator, scoreRequests } from "./usage.ts";

const H100 = "NVIDIA-H100-80GB-HBM3";
const DAY = 24 * 3_600_000;
const T0 = Date.parse("2026-11-28T00:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();
const settings = resolveSettings();

function aRequest(key: string, over: Partial<FairRequest> = {}): FairRequest {
  return {
    key,
    org: "a",
    project: "p",
    user: "u",
    gpuModel: H100,
    gpuCount: 1,
    cards: 1,
    mayBorrow: false,
    priority: 0,
    since: at(0),
    volumes: [],
    ...over,
  };
}

describe("decayed usage", () => {
  it("halves a run's card-hours over one half-life", () => {
    const run = { org: "a", project: "p", user: "u", cards: 2, start: at(0), end: at(3_600_000) };
    const fresh = decayedUsage([run], at(3_600_000), 7 * DAY).orgs.a as number;
    const old = decayedUsage([run], at(3_600_000 + 7 * DAY), 7 * DAY).orgs.a as number;
    expect(fresh).toBeCloseTo(2, 2);
    expect(old / fresh).toBeCloseTo(0.5, 6);
  });

  it("counts a running session up to now, per org, project and user", () => {
    const u = decayedUsage(
      [
        { org: "a", project: "p", user: "u", cards: 1, start: at(0) },
        { org: "a", project: "q", user: "v", cards: 1, start: at(0), end: at(1_800_000) },
      ],
      at(3_600_000),
      7 * DAY,
    );
    expect(u.orgs.a).toBeCloseTo(1.5, 2);
    expect(u.projects["a/p"]).toBeCloseTo(1, 2);
    expect(u.users["a/q/v"]).toBeCloseTo(0.5, 2);
  });
});

describe("the order of waiting requests", () => {
  const tree: ShareTree = {
    orgs: [
      { org: "a", weight: 3 },
      { org: "b", weight: 1 },
    ],
  };

  it("puts the org below its weighted share first", () => {
    // a used 3× what b used, at 3× b's weight: even. b used as much as a: b is over its share.
    const even: DecayedUsage = { orgs: { a: 30, b: 10 }, projects: {}, users: {} };
    const bHeavy: DecayedUsage = { orgs: { a: 20, b: 20 }, projects: {}, users: {} };
    const reqs = [aRequest("a/1"), aRequest("b/1", { org: "b" })];
    const [a1, b1] = scoreRequests(tree, even, reqs, at(0), settings);
    expect(a1?.usagePenalty).toBeCloseTo(b1?.usagePenalty as number, 6);
    const order = [...reqs].sort(fairComparator(scoreRequests(tree, bHeavy, reqs, at(0), settings)));
    expect(order.map((r) => r.key)).toEqual(["a/1", "b/1"]);
  });

  it("compares projects within an org, and users within a project, after the org", () => {
    const t: ShareTree = {
      orgs: [
        {
          org: "a",
          projects: [
            { project: "p", weight: 1 },
            { project: "q", weight: 1 },
          ],
        },
      ],
    };
    const u: DecayedUsage = { orgs: { a: 10 }, projects: { "a/p": 9, "a/q": 1 }, users: {} };
    const reqs = [aRequest("p/1"), aRequest("q/1", { project: "q" })];
    expect([...reqs].sort(fairComparator(scoreRequests(t, u, reqs, at(0), settings))).map((r) => r.key)).toEqual([
      "q/1",
      "p/1",
    ]);
  });

  it("keeps priority as the first key", () => {
    const u: DecayedUsage = { orgs: { a: 100, b: 0 }, projects: {}, users: {} };
    const reqs = [aRequest("b/1", { org: "b" }), aRequest("a/1", { priority: 10 })];
    expect([...reqs].sort(fairComparator(scoreRequests(tree, u, reqs, at(0), settings))).map((r) => r.key)).toEqual([
      "a/1",
      "b/1",
    ]);
  });

  it("bounds the usage penalty below the aging cap, so waiting outgrows any usage", () => {
    const u: DecayedUsage = { orgs: { a: 1e9, b: 0 }, projects: { "a/p": 1e9 }, users: { "a/p/u": 1e9 } };
    const [s] = scoreRequests(tree, u, [aRequest("a/1", { since: at(-30 * DAY) })], at(0), settings);
    expect(s?.usagePenalty).toBeLessThan(settings.maxUsagePenalty);
    expect(s?.aging).toBe(settings.agingCap);
    expect(s?.score).toBeGreaterThan(0);
  });
});

// A heavy org's one request against a light org's endless stream that alone would fill the cluster: with
// aging it starts once it has waited out its penalty (a fresh arrival scores ≤ 0, it scores > 0); with aging
// too slow to outgrow the penalty it would still wait at the horizon.
describe("a simulated week of contention", () => {
  function simulate(agingPerMinute: number): number | undefined {
    const tree: ShareTree = { orgs: [{ org: "heavy" }, { org: "light" }] };
    const usage: DecayedUsage = { orgs: { heavy: 5000, light: 1 }, projects: {}, users: {} };
    const clusters = (free: number): ClusterCapacity[] => [
      { clusterId: "c1", placeable: true, models: { [H100]: { total: 4, free, largestNode: 4 } } },
    ];
    // The cluster is full of light sessions when the heavy request arrives.
    let running = [1, 2, 3, 4].map((i) => ({ key: `light/x${i}`, ends: i * 5 * 60_000 }));
    const waiting: FairRequest[] = [aRequest("heavy/1", { org: "heavy", since: at(0) })];
    let n = 0;
    for (let minute = 0; minute < 7 * 24 * 60; minute++) {
      const now = minute * 60_000;
      running = running.filter((r) => r.ends > now);
      // Light: a 30-minute session every 5 minutes, 6 GPUs of demand on 4.
      // (At most 12 of them waiting at once: enough to keep the queue full, few enough to keep the test fast.)
      if (minute % 5 === 0 && waiting.length < 12)
        waiting.push(aRequest(`light/${n++}`, { org: "light", since: at(now) }));
      const holders: Holder[] = running.map((r) => ({
        key: r.key,
        org: r.key.split("/")[0] as string,
        project: "p",
        user: "u",
        clusterId: "c1",
        gpuModel: H100,
        cards: 1,
        capacityClass: "guaranteed",
        priority: 0,
        startedAt: at(now),
        idle: false,
      }));
      const plan = planFairPass({
        now: at(now),
        tree,
        settings: { agingPerMinute },
        requests: waiting,
        holders,
        usage,
        clusters: clusters(4 - running.length),
        policy: "binpack",
      });
      for (const p of plan.placed) {
        if (p.key === "heavy/1") return minute;
        running.push({ key: p.key, ends: now + 30 * 60_000 });
        waiting.splice(
          waiting.findIndex((w) => w.key === p.key),
          1,
        );
      }
    }
    return undefined;
  }

  it("starts the heavy user's request once its aging has outgrown its usage penalty", () => {
    const started = simulate(1);
    expect(started).toBeDefined();
    // Penalty < 1000 points at 1 point a minute, plus one light session's length for room to appear.
    expect(started as number).toBeLessThanOrEqual(1000 + 30);
  });

  it("would starve it if aging could not outgrow the penalty within the week", () => {
    expect(simulate(0.05)).toBeUndefined();
  });
});
