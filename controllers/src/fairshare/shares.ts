// The share tree: its checks, its satisfiability against the fleet, and a request's capacity class
// (docs/dev/fair-share.md). Pure.
import type { ClusterCapacity, PlacementRequest } from "../placement/types.ts";
import type { EtaShare } from "./eta-types.ts";
import {
  type CardEquivalentsFn,
  type CheckSatisfiableFn,
  type CheckShareTreeFn,
  type Classification,
  type ClassifyFn,
  type ClassRequest,
  DEFAULT_FAIR_SHARE_SETTINGS,
  type FairRequest,
  FairShareInvalid,
  type FairShareIssue,
  type FairShareSettings,
  type Holder,
  type ModelQuota,
  type OrgShare,
  type ResolveSettingsFn,
  type ShareTree,
} from "./types.ts";

export const cardEquivalents: CardEquivalentsFn = (demand, card) => {
  if (!demand.slice) return demand.gpuCount;
  const memory = card.memoryMib > 0 ? demand.slice.memoryMib / card.memoryMib : 1;
  return Math.min(1, Math.max(memory, demand.slice.cores / 100));
};

const finite = (n: unknown): n is number => typeof n === "number" && Number.isFinite(n);

function checkQuota(q: ModelQuota, at: string, issues: FairShareIssue[]): void {
  if (!finite(q.guaranteed) || q.guaranteed < 0)
    issues.push({ field: `${at}.guaranteed`, message: "must be a number ≥ 0" });
  if (q.borrowingLimit !== undefined && (!finite(q.borrowingLimit) || q.borrowingLimit < 0))
    issues.push({ field: `${at}.borrowingLimit`, message: "must be a number ≥ 0 (absent: no limit)" });
  if (q.lendingLimit !== undefined) {
    if (!finite(q.lendingLimit) || q.lendingLimit < 0)
      issues.push({ field: `${at}.lendingLimit`, message: "must be a number ≥ 0 (absent: all of the guarantee)" });
    else if (finite(q.guaranteed) && q.lendingLimit > q.guaranteed)
      issues.push({
        field: `${at}.lendingLimit`,
        message: `${q.lendingLimit} is above the guarantee ${q.guaranteed}: nothing beyond a guarantee can be lent`,
      });
  }
}

function checkWeight(w: number | undefined, at: string, issues: FairShareIssue[]): void {
  if (w !== undefined && (!finite(w) || w <= 0)) issues.push({ field: at, message: "must be a number > 0" });
}

export const checkShareTree: CheckShareTreeFn = (tree) => {
  const issues: FairShareIssue[] = [];
  const orgs = new Set<string>();
  tree.orgs.forEach((o, i) => {
    const at = `orgs[${i}]`;
    if (orgs.has(o.org)) issues.push({ field: `${at}.org`, message: `${o.org} appears twice` });
    orgs.add(o.org);
    checkWeight(o.weight, `${at}.weight`, issues);
    for (const [model, q] of Object.entries(o.quotas ?? {})) checkQuota(q, `${at}.quotas.${model}`, issues);
    const carved = new Map<string, number>();
    const projects = new Set<string>();
    (o.projects ?? []).forEach((p, j) => {
      const pat = `${at}.projects[${j}]`;
      if (projects.has(p.project)) issues.push({ field: `${pat}.project`, message: `${p.project} appears twice` });
      projects.add(p.project);
      checkWeight(p.weight, `${pat}.weight`, issues);
      for (const [user, w] of Object.entries(p.userWeights ?? {})) checkWeight(w, `${pat}.userWeights.${user}`, issues);
      for (const [model, q] of Object.entries(p.quotas ?? {})) {
        checkQuota(q, `${pat}.quotas.${model}`, issues);
        if (finite(q.guaranteed)) carved.set(model, (carved.get(model) ?? 0) + q.guaranteed);
      }
    });
    for (const [model, sum] of carved) {
      const own = o.quotas?.[model]?.guaranteed ?? 0;
      if (sum > own)
        issues.push({
          field: `${at}.projects`,
          message: `the projects' guarantees of ${model} add up to ${sum}, above the organization's ${own}`,
        });
    }
  });
  return issues;
};

/** Throws FairShareInvalid when the tree has any problem. */
export function assertShareTree(tree: ShareTree): void {
  const issues = checkShareTree(tree);
  if (issues.length > 0) throw new FairShareInvalid(issues);
}

export const resolveSettings: ResolveSettingsFn = (partial = {}) => {
  const s: FairShareSettings = { ...DEFAULT_FAIR_SHARE_SETTINGS };
  for (const [k, v] of Object.entries(partial)) if (v !== undefined) (s as unknown as Record<string, unknown>)[k] = v;
  const issues: FairShareIssue[] = [];
  const positive = ["halfLifeMs", "maxUsagePenalty", "agingPerMinute", "agingCap"] as const;
  for (const k of positive) if (!finite(s[k]) || s[k] <= 0) issues.push({ field: k, message: "must be a number > 0" });
  if (!finite(s.minRuntimeMs) || s.minRuntimeMs < 0) issues.push({ field: "minRuntimeMs", message: "must be ≥ 0" });
  if (issues.length === 0 && s.agingCap <= s.maxUsagePenalty)
    issues.push({
      field: "agingCap",
      message: `${s.agingCap} must exceed maxUsagePenalty ${s.maxUsagePenalty}, or a heavy user's request could wait forever`,
    });
  if (issues.length > 0) throw new FairShareInvalid(issues);
  return s;
};

/** Allocatable card equivalents per GPU model over the placeable clusters. */
export function fleetCapacity(clusters: readonly ClusterCapacity[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of clusters) {
    if (!c.placeable) continue;
    for (const [model, m] of Object.entries(c.models)) out[model] = (out[model] ?? 0) + m.total;
  }
  return out;
}

export const checkSatisfiable: CheckSatisfiableFn = (tree, capacity) => {
  const byModel = new Map<string, { org: string; cards: number }[]>();
  for (const o of tree.orgs)
    for (const [model, q] of Object.entries(o.quotas ?? {})) {
      if (!(q.guaranteed > 0)) continue;
      const list = byModel.get(model) ?? [];
      list.push({ org: o.org, cards: q.guaranteed });
      byModel.set(model, list);
    }
  const models = [...byModel.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([gpuModel, list]) => {
      const guaranteed = list.reduce((s, x) => s + x.cards, 0);
      const cap = capacity[gpuModel] ?? 0;
      const ok = guaranteed <= cap;
      const terms = list.map((x) => `${x.org} ${round(x.cards)}`).join(" + ");
      const sum = list.length > 1 ? `${terms} = ${round(guaranteed)}` : terms;
      return {
        gpuModel,
        guaranteed,
        capacity: cap,
        ok,
        arithmetic: `${gpuModel}: ${sum} guaranteed ${ok ? "≤" : ">"} ${round(cap)} in the fleet`,
      };
    });
  const bad = models.filter((m) => !m.ok);
  return {
    ok: bad.length === 0,
    models,
    message: bad.length === 0 ? "" : `guarantees exceed the fleet: ${bad.map((m) => m.arithmetic).join("; ")}`,
  };
};

const round = (n: number) => Math.round(n * 1000) / 1000;

/** What is held per model, by org and by org/project, split by class: built once, then kept up to date. */
export class HeldTally {
  readonly #sums = new Map<string, { guaranteed: number; borrowed: number }>();

  constructor(holders: readonly Holder[] = []) {
    for (const h of holders) this.add(h);
  }

  add(h: Pick<Holder, "org" | "project" | "gpuModel" | "cards" | "capacityClass">): void {
    for (const k of [`${h.gpuModel}|`, `${h.gpuModel}|${h.org}`, `${h.gpuModel}|${h.org}|${h.project}`]) {
      let v = this.#sums.get(k);
      if (!v) {
        v = { guaranteed: 0, borrowed: 0 };
        this.#sums.set(k, v);
      }
      v[h.capacityClass] += h.cards;
    }
  }

  /** The whole model (no org), an org, or a project of an org. */
  of(model: string, org?: string, project?: string): { guaranteed: number; borrowed: number } {
    const k =
      org === undefined ? `${model}|` : project === undefined ? `${model}|${org}` : `${model}|${org}|${project}`;
    return this.#sums.get(k) ?? { guaranteed: 0, borrowed: 0 };
  }
}

/** Whether any organization has a quota for the model: a model nobody has is unmanaged. */
export function managed(tree: ShareTree, model: string): boolean {
  return tree.orgs.some((o) => o.quotas?.[model] !== undefined);
}

// Float sums of slices (1/8 + 1/8 + …) must not refuse an exact fit.
const EPS = 1e-9;

export const classifyRequest: ClassifyFn = (tree, holders, req, capacity) =>
  classifyWith(tree, new HeldTally(holders), req, capacity);

/** classifyRequest over a tally (a pass classifies many requests against one, adding as it admits). */
export function classifyWith(
  tree: ShareTree,
  tally: HeldTally,
  req: ClassRequest,
  capacity: Record<string, number>,
): Classification {
  const model = req.gpuModel;
  if (!managed(tree, model)) return { kind: "guaranteed", message: `${model} has no quotas: first come, first served` };
  const org = tree.orgs.find((o) => o.org === req.org);
  const oq = org?.quotas?.[model];
  const project = org?.projects?.find((p) => p.project === req.project);
  const pq = project?.quotas?.[model];
  const orgHeld = tally.of(model, req.org);

  // Within the guarantee: the org's, and the project's own or the org's part not carved out to projects.
  const orgRoom = (oq?.guaranteed ?? 0) - orgHeld.guaranteed;
  let projectRoom: number;
  if (pq) projectRoom = pq.guaranteed - tally.of(model, req.org, req.project).guaranteed;
  else {
    const carvedProjects = (org?.projects ?? []).filter((p) => p.quotas?.[model]);
    const carved = carvedProjects.reduce((s, p) => s + (p.quotas?.[model]?.guaranteed ?? 0), 0);
    const pooled =
      orgHeld.guaranteed - carvedProjects.reduce((s, p) => s + tally.of(model, req.org, p.project).guaranteed, 0);
    projectRoom = (oq?.guaranteed ?? 0) - carved - pooled;
  }
  if (req.capacityClass !== "borrowed" && req.cards <= Math.min(orgRoom, projectRoom) + EPS)
    return {
      kind: "guaranteed",
      message: `within ${req.org}'s guarantee of ${round(oq?.guaranteed ?? 0)} × ${model} (${round(orgHeld.guaranteed)} in use)`,
    };

  if (!req.mayBorrow || req.capacityClass === "guaranteed")
    return {
      kind: "refused",
      reason: "OverGuarantee",
      message: `${req.org}'s guarantee of ${model} is in use (${round(orgHeld.guaranteed)} of ${round(oq?.guaranteed ?? 0)}); it waits for its guarantee (opt in to borrowed capacity to start on idle GPUs)`,
    };

  const orgLimit = oq?.borrowingLimit;
  if (orgLimit !== undefined && orgHeld.borrowed + req.cards > orgLimit + EPS)
    return {
      kind: "refused",
      reason: "OverBorrowingLimit",
      message: `${req.org} borrows ${round(orgHeld.borrowed)} × ${model} of its limit ${round(orgLimit)}`,
    };
  const projectLimit = pq?.borrowingLimit;
  if (projectLimit !== undefined) {
    const p = tally.of(model, req.org, req.project);
    if (p.borrowed + req.cards > projectLimit + EPS)
      return {
        kind: "refused",
        reason: "OverBorrowingLimit",
        message: `project ${req.project} borrows ${round(p.borrowed)} × ${model} of its limit ${round(projectLimit)}`,
      };
  }

  // Borrowable = room nobody is guaranteed + others' unused guarantee within their lending limits, less
  // what is borrowed already (borrowers use the unguaranteed room first, then lent guarantees).
  const cap = capacity[model] ?? 0;
  let guaranteedTotal = 0;
  let lendable = 0;
  for (const o of tree.orgs) {
    const q = o.quotas?.[model];
    if (!q) continue;
    guaranteedTotal += q.guaranteed;
    const unused = Math.max(0, q.guaranteed - tally.of(model, o.org).guaranteed);
    lendable += Math.min(unused, q.lendingLimit ?? q.guaranteed);
  }
  const unguaranteed = Math.max(0, cap - guaranteedTotal);
  const borrowedNow = tally.of(model).borrowed;
  const borrowable = unguaranteed + lendable - borrowedNow;
  if (req.cards > borrowable + EPS)
    return {
      kind: "refused",
      reason: "NothingLendable",
      message: `nothing of ${model} to borrow: ${round(unguaranteed)} unguaranteed + ${round(lendable)} lendable − ${round(borrowedNow)} borrowed = ${round(Math.max(0, borrowable))}`,
    };
  return {
    kind: "borrowed",
    message: `borrowed ${model} beyond ${req.org}'s guarantee; it may be reclaimed (paused) after a notice`,
  };
}

/**
 * Fair share's admission, the worker's rule (planFairPass) and the queue ETA's (its simulation calls it at
 * every step): which waiting requests may take room now, and in which class. Guarantees first: demand
 * within a guarantee is not lendable, even when a borrower comes earlier in `ordered` (else the borrower
 * starts only to be reclaimed minutes later); then the borrowers in `ordered`'s order. Each admission is
 * added to `tally` as it is given (as Kueue reserves quota), so `tally` ends holding the admitted ones.
 */
export function admitRequests(
  tree: ShareTree,
  tally: HeldTally,
  ordered: readonly (ClassRequest & { key: string })[],
  capacity: Record<string, number>,
): Record<string, Classification> {
  const classes: Record<string, Classification> = {};
  const admit = (req: ClassRequest & { key: string }, c: Classification) => {
    classes[req.key] = c;
    if (c.kind !== "refused") tally.add({ ...req, capacityClass: c.kind });
  };
  for (const req of ordered) {
    const c = classifyWith(tree, tally, req, capacity);
    if (c.kind === "guaranteed") admit(req, c);
  }
  for (const req of ordered) if (!classes[req.key]) admit(req, classifyWith(tree, tally, req, capacity));
  return classes;
}

/**
 * A waiting session as fair share reads it, from its placement request and its owner, size and the class
 * fixed at creation (a borrowed one opted in): the worker's pass (fair-placement.ts) and the queue ETA.
 */
export function fairRequestOf(r: PlacementRequest, side: EtaShare): FairRequest {
  return { ...r, ...side, mayBorrow: side.capacityClass === "borrowed" };
}

/** Placement's order after admission: guaranteed before borrowed, each in `compare`'s (fair) order. */
export function guaranteedFirst<T extends { key: string }>(
  classes: Readonly<Record<string, Classification>>,
  compare: (a: T, b: T) => number,
): (a: T, b: T) => number {
  return (a, b) =>
    Number(classes[a.key]?.kind === "borrowed") - Number(classes[b.key]?.kind === "borrowed") || compare(a, b);
}

/** The org of a share tree by name (an org not in the tree has weight 1 and no quotas). */
export function orgOf(tree: ShareTree, org: string): OrgShare | undefined {
  return tree.orgs.find((o) => o.org === org);
}
