// Decayed usage and the waiting requests' order: hierarchical weighted fair share with aging
// (docs/dev/fair-share.md). Pure.
import type { PlacementRequest } from "../placement/types.ts";
import type { DecayedUsage, DecayedUsageFn, FairScore, ScoreRequestsFn, ShareTree } from "./types.ts";

const HOUR = 3_600_000;

/**
 * Card-hours weighted by 2^−(age/halfLife): the integral of the decay over each interval, so that a long
 * run counts its recent hours more than its old ones.
 */
export const decayedUsage: DecayedUsageFn = (intervals, now, halfLifeMs) => {
  const t = Date.parse(now);
  const out: DecayedUsage = { orgs: {}, projects: {}, users: {} };
  const k = Math.LN2 / halfLifeMs;
  for (const i of intervals) {
    const s = Date.parse(i.start);
    const e = Math.min(i.end === undefined ? t : Date.parse(i.end), t);
    if (!(e > s) || !(i.cards > 0)) continue;
    // ∫_s^e 2^−(t−x)/H dx = (H/ln2)(2^−(t−e)/H − 2^−(t−s)/H)
    const v = (i.cards * (Math.exp(-k * (t - e)) - Math.exp(-k * (t - s)))) / k / HOUR;
    add(out.orgs, i.org, v);
    add(out.projects, `${i.org}/${i.project}`, v);
    add(out.users, `${i.org}/${i.project}/${i.user}`, v);
  }
  return out;
};

/** Decays a usage snapshot taken `elapsedMs` ago to now (the benches keep a running total this way). */
export function ageUsage(u: DecayedUsage, elapsedMs: number, halfLifeMs: number): DecayedUsage {
  const f = 2 ** (-elapsedMs / halfLifeMs);
  const scale = (r: Record<string, number>) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v * f]));
  return { orgs: scale(u.orgs), projects: scale(u.projects), users: scale(u.users) };
}

function add(r: Record<string, number>, k: string, v: number): void {
  r[k] = (r[k] ?? 0) + v;
}

// The levels weigh 1, 1/8, 1/64: an org's standing dominates (a share tree compares siblings under their
// common parent first), yet the penalty stays a bounded sum that aging can outgrow.
const LEVEL = [1, 1 / 8, 1 / 64] as const;
const LEVEL_SUM = LEVEL[0] + LEVEL[1] + LEVEL[2];

interface Level {
  /** Sibling name → weight. */
  weights: Map<string, number>;
  usage: (name: string) => number;
}

/** Usage fraction ÷ weight fraction among siblings, and both fractions. */
function ratio(level: Level, name: string): { r: number; share: number; used: number } {
  let wSum = 0;
  let uSum = 0;
  for (const [n, w] of level.weights) {
    wSum += w;
    uSum += level.usage(n);
  }
  const share = (level.weights.get(name) ?? 1) / wSum;
  const used = uSum > 0 ? level.usage(name) / uSum : 0;
  return { r: used / share, share, used };
}

export const scoreRequests: ScoreRequestsFn = (tree, usage, requests, now, settings) => {
  const t = Date.parse(now);
  // Siblings: those the tree names, and those that use or ask (weight 1 when unnamed).
  const orgW = new Map<string, number>();
  for (const o of tree.orgs) orgW.set(o.org, o.weight ?? 1);
  const seenOrgs = [...Object.keys(usage.orgs), ...requests.map((r) => r.org)];
  for (const o of seenOrgs) if (!orgW.has(o)) orgW.set(o, 1);

  // Siblings by parent, in one walk over the usage and the requests (a walk per parent was most of a pass's
  // cost at 3,400 sessions): the tree's named ones first, then those that use, then those that ask.
  const projectW = new Map<string, Map<string, number>>();
  const userW = new Map<string, Map<string, number>>();
  const siblings = (all: Map<string, Map<string, number>>, parent: string) => {
    let m = all.get(parent);
    if (!m) {
      m = new Map();
      all.set(parent, m);
    }
    return m;
  };
  for (const o of tree.orgs)
    for (const p of o.projects ?? []) {
      siblings(projectW, o.org).set(p.project, p.weight ?? 1);
      for (const [u, w] of Object.entries(p.userWeights ?? {})) siblings(userW, `${o.org}/${p.project}`).set(u, w);
    }
  const unnamed = (m: Map<string, number>, name: string) => {
    if (!m.has(name)) m.set(name, 1);
  };
  for (const k of Object.keys(usage.projects)) {
    const [o, p] = k.split("/") as [string, string];
    unnamed(siblings(projectW, o), p);
  }
  for (const r of requests) unnamed(siblings(projectW, r.org), r.project);
  for (const k of Object.keys(usage.users)) {
    const [o, p, u] = k.split("/") as [string, string, string];
    unnamed(siblings(userW, `${o}/${p}`), u);
  }
  for (const r of requests) unnamed(siblings(userW, `${r.org}/${r.project}`), r.user);
  const projectsOf = (org: string) => siblings(projectW, org);
  const usersOf = (org: string, project: string) => siblings(userW, `${org}/${project}`);

  return requests.map((req) => {
    const o = ratio({ weights: orgW, usage: (n) => usage.orgs[n] ?? 0 }, req.org);
    const p = ratio(
      { weights: projectsOf(req.org), usage: (n) => usage.projects[`${req.org}/${n}`] ?? 0 },
      req.project,
    );
    const u = ratio(
      { weights: usersOf(req.org, req.project), usage: (n) => usage.users[`${req.org}/${req.project}/${n}`] ?? 0 },
      req.user,
    );
    const level = (r: number) => 1 - 2 ** -r;
    const usagePenalty =
      (settings.maxUsagePenalty * (LEVEL[0] * level(o.r) + LEVEL[1] * level(p.r) + LEVEL[2] * level(u.r))) / LEVEL_SUM;
    const waitedMin = Math.max(0, (t - Date.parse(req.since)) / 60_000);
    const aging = Math.min(settings.agingCap, settings.agingPerMinute * waitedMin);
    return {
      key: req.key,
      score: aging - usagePenalty,
      usagePenalty,
      aging,
      fairShare: o.share * p.share * u.share,
      usageShare: o.used * p.used * u.used,
    } satisfies FairScore;
  });
};

/** The queue's order with fair share: priority band first, then score, then age, then key. */
export function fairComparator(scores: readonly FairScore[]): (a: PlacementRequest, b: PlacementRequest) => number {
  const byKey = new Map(scores.map((s) => [s.key, s.score]));
  return (a, b) => {
    if (a.priority !== b.priority) return b.priority - a.priority;
    const sa = byKey.get(a.key) ?? 0;
    const sb = byKey.get(b.key) ?? 0;
    if (sa !== sb) return sb - sa;
    if (a.since !== b.since) return Date.parse(a.since) - Date.parse(b.since);
    return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
  };
}

/** How far over its weighted fair share an org's decayed usage is (usage fraction ÷ weight fraction). */
export function overShare(tree: ShareTree, usage: DecayedUsage, org: string): number {
  const weights = new Map<string, number>();
  for (const o of tree.orgs) weights.set(o.org, o.weight ?? 1);
  for (const o of Object.keys(usage.orgs)) if (!weights.has(o)) weights.set(o, 1);
  if (!weights.has(org)) weights.set(org, 1);
  return ratio({ weights, usage: (n) => usage.orgs[n] ?? 0 }, org).r;
}
