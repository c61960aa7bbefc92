// The placement pass: every waiting session at once, against the clusters' free GPUs (what the inventory
// reports, less what sessions and stray mirrors hold), decided by placement/plan.ts. Placed sessions get
// their status (Starting, cluster) and the revision of the mirror dispatch will write, taken in one batch
// for the pass; the rest get their queue position. Passes never overlap; a request during one runs
// another after it.
import type { Session } from "@berth/crds";
import { sessionIdOf } from "@berth/crds";
import type { Logger } from "pino";
import type { Holder } from "../fairshare/types.ts";
import { computeCapacity, type Holding } from "../placement/capacity.ts";
import { type CardHolding, CardPool } from "../placement/cards.ts";
import { compareRequests, planPlacement } from "../placement/plan.ts";
import type { PlacementPlan, PlacementPolicy, PlacementRequest } from "../placement/types.ts";
import { type FairSide, fairPlacementPlan, fairSideOf, holderOf } from "./fair-placement.ts";
import { HOLDING_PHASES, type KubeEventSpec, phaseOf, placedStatus, queueSince, waitingStatus } from "./lifecycle.ts";
import type { SessionMemory } from "./memory.ts";
import type { Observed } from "./observed.ts";
import type { SessionControllerOptions, WriteCounts } from "./options.ts";
import type { FairShareView, SessionStore } from "./store.ts";
import { tenancyOf } from "./tenancy.ts";

/** How soon a requested pass runs (requests in the meantime join it). */
const GATHER_MS = 10;
/** A failed pass is tried again after this long. */
const RETRY_MS = 1_000;
/** Pass durations kept for the metrics' quantiles. */
const PASS_TIMES = 1_000;

export interface PlacementPassDeps {
  store: SessionStore;
  observed: Observed;
  memory: SessionMemory;
  counts: WriteCounts;
  log: Logger;
  now: () => Date;
  options: Pick<SessionControllerOptions, "policy" | "constraints" | "concurrency">;
  writeStatus(
    s: Session,
    status: NonNullable<Session["status"]>,
    events: KubeEventSpec[],
  ): Promise<Session | undefined>;
  /** Dispatch goes through the session's own reconcile. */
  requeue(key: string): void;
}

export class PlacementPass {
  readonly #d: PlacementPassDeps;
  #running: Promise<void> | undefined;
  #again = false;
  #timer: NodeJS.Timeout | undefined;
  #retry: NodeJS.Timeout | undefined;
  #enabled = false;
  #idle: (() => void)[] = [];
  /** How long the last passes took, in ms (at most PASS_TIMES, oldest first): the worker's metrics read them. */
  readonly recentMs: number[] = [];

  constructor(d: PlacementPassDeps) {
    this.#d = d;
  }

  /** The administrators' choice when the store has one; a failure to read it must not stop placement. */
  async #policy(): Promise<PlacementPolicy> {
    try {
      return (await this.#d.store.placementPolicy?.()) ?? this.#d.options.policy;
    } catch (err) {
      this.#d.log.warn({ err }, "reading the placement policy failed; using the configured one");
      return this.#d.options.policy;
    }
  }

  /** Fair share's input when the store has it; a failure to read it must not stop placement. */
  async #fairShare(now: Date): Promise<FairShareView | undefined> {
    try {
      return await this.#d.store.fairShare?.(now);
    } catch (err) {
      this.#d.log.warn({ err }, "reading fair share failed; placing by priority and age");
      return undefined;
    }
  }

  /** Passes are run from now on (the controller has synced). */
  enable(): void {
    this.#enabled = true;
  }

  /** Runs a pass soon; passes never overlap, and a request during one runs another after it. */
  schedule(): void {
    if (!this.#enabled) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      const t0 = performance.now();
      this.#running = this.#pass()
        .then(() => {
          this.recentMs.push(performance.now() - t0);
          if (this.recentMs.length > PASS_TIMES) this.recentMs.shift();
        })
        .catch((err: unknown) => {
          this.#d.log.warn({ err: String(err) }, "placement pass failed; trying again in 1 s");
          clearTimeout(this.#retry);
          this.#retry = setTimeout(() => this.schedule(), RETRY_MS);
          this.#retry.unref?.();
        })
        .finally(() => {
          this.#running = undefined;
          if (this.#again) {
            this.#again = false;
            this.schedule();
          }
          if (!this.busy) for (const f of this.#idle.splice(0)) f();
        });
    }, GATHER_MS);
  }

  /** A pass is running or about to (a retry after a failure aside). */
  get busy(): boolean {
    return this.#running !== undefined || this.#timer !== undefined;
  }

  /** Resolves when no pass runs or waits to run (a retry after a failure aside). */
  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((r) => this.#idle.push(r));
  }

  /** No more passes; resolves once the running one is done. */
  async stop(): Promise<void> {
    this.#enabled = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    clearTimeout(this.#retry);
    await this.#running;
    for (const f of this.#idle.splice(0)) f();
  }

  async #pass(): Promise<void> {
    const { observed, memory, store, counts } = this.#d;
    if (!observed.sessions.synced) return;
    counts.placementPasses++;
    const now = this.#d.now();
    const requests: PlacementRequest[] = [];
    const holdings: Holding[] = [];
    const cardHoldings: CardHolding[] = [];
    const waitingOnCatalog: Session[] = [];
    const bySession = new Map<string, Session>();
    const borrowed = new Set<string>();
    const sides = new Map<string, FairSide>();
    const holders: Holder[] = [];
    for (const [key, s] of observed.sessionsNow()) {
      const id = sessionIdOf(s.metadata.name as string);
      const phase = phaseOf(s);
      // A stray mirror holds its GPUs until it is gone, as a Pausing session's does.
      const strays = observed.strays(s, id);
      const strayGpus = strays.length > 0 ? observed.gpuCountOf(s) : undefined;
      if (s.status?.gpuModel && strayGpus)
        for (const r of strays)
          holdings.push({
            clusterId: r.clusterId,
            gpuModel: s.status.gpuModel,
            gpuCount: strayGpus,
            ...(s.spec.migProfile ? { migProfile: s.spec.migProfile } : {}),
          });
      if (s.status?.cluster && HOLDING_PHASES.includes(phase)) {
        const gpuCount = observed.gpuCountOf(s);
        const assigned = s.status.gpuAssignment;
        if (assigned) {
          const slice = s.spec.gpuSlice;
          cardHoldings.push({
            clusterId: s.status.cluster,
            node: assigned.node,
            cards: assigned.cards,
            ...(slice ? { slice: { memoryMib: slice.memoryMib, cores: slice.cores } } : {}),
          });
        }
        // Whole GPUs count in the cluster's sum too; slices only on their card.
        if (s.status.gpuModel && gpuCount && !s.spec.gpuSlice)
          holdings.push({
            clusterId: s.status.cluster,
            gpuModel: s.status.gpuModel,
            gpuCount,
            ...(s.spec.migProfile ? { migProfile: s.spec.migProfile } : {}),
          });
        const holder = gpuCount ? holderOf(s, key, gpuCount, now) : undefined;
        if (holder) holders.push(holder);
        continue;
      }
      const wants =
        s.spec.desiredState === "Running" && (phase === "Pending" || phase === "Queued" || phase === "Paused");
      if (!wants) continue;
      const offering = observed.offerings.store.get(s.spec.offering);
      const gpuCount = observed.gpuCountOf(s);
      if (!offering || !gpuCount) {
        waitingOnCatalog.push(s);
        continue;
      }
      const avoid = memory.avoid.get(id);
      const avoiding = avoid !== undefined && avoid.until >= now.getTime();
      if (avoid && !avoiding) memory.avoid.delete(id);
      bySession.set(key, s);
      if (s.spec.capacityClass === "borrowed") borrowed.add(key);
      sides.set(key, fairSideOf(s, gpuCount, offering.spec.gpuModel));
      // A session paused to give borrowed GPUs back waits from its first start, ahead of new work.
      const reclaimed = s.status?.capacityReclaim?.pausedAt && phase === "Paused";
      requests.push({
        key,
        gpuModel: offering.spec.gpuModel,
        gpuCount,
        ...(s.spec.gpuSlice ? { slice: { memoryMib: s.spec.gpuSlice.memoryMib, cores: s.spec.gpuSlice.cores } } : {}),
        ...(s.spec.migProfile ? { migProfile: s.spec.migProfile } : {}),
        priority: s.spec.priority,
        since: reclaimed ? (s.status?.startedAt ?? queueSince(s, now)) : queueSince(s, now),
        ...(s.spec.clusterPin ? { clusterPin: s.spec.clusterPin } : {}),
        volumes: s.spec.volumes.map((v) => {
          const vol = observed.volumes.store.get(`${s.metadata.namespace}/${v.volume}`);
          const bound = vol?.status?.boundCluster;
          const pool = vol?.spec.pool ? observed.pools.store.get(vol.spec.pool) : undefined;
          const allowed = pool?.spec.sharing === "selected" ? pool.spec.clusters : undefined;
          return {
            name: v.volume,
            ...(bound ? { boundCluster: bound } : {}),
            ...(allowed ? { allowedClusters: allowed } : {}),
          };
        }),
        ...(avoiding ? { avoidClusters: [avoid.cluster] } : {}),
        tenancy: tenancyOf(s),
      });
    }
    if (requests.length === 0 && waitingOnCatalog.length === 0) return;

    const clusters = [...observed.clusterRecords.values()]
      .filter((c) => c.registered && observed.clusterResource(c.id))
      .map((c) => ({ clusterId: c.id, placeable: observed.reporting(c) }));
    const capacity = computeCapacity(clusters, observed.inventory, holdings);
    const policy = await this.#policy();
    const cards = new CardPool(observed.inventory, cardHoldings);
    const constraints = this.#d.options.constraints;
    const view = requests.length > 0 ? await this.#fairShare(now) : undefined;
    const plan: PlacementPlan = view
      ? fairPlacementPlan({ now, view, requests, sides, holders, clusters: capacity, policy, constraints, cards })
      : planPlacement({
          requests,
          clusters: capacity,
          policy,
          constraints,
          cards,
          // Guaranteed requests go before borrowed ones (docs/dev/fair-share.md): the GPUs a reclaim frees
          // must go to the guaranteed session it was for, not back to the borrowed one waiting to resume.
          compare: (a, b) => Number(borrowed.has(a.key)) - Number(borrowed.has(b.key)) || compareRequests(a, b),
        });

    // The revisions of the mirrors these placements dispatch, taken in one round trip for the whole
    // pass. If that fails, the pass writes nothing and is tried again; a revision whose placement is
    // not written is never used (revisions only need to grow, not to be dense).
    const idOf = (key: string) => sessionIdOf(key.split("/")[1] ?? "");
    const revisions =
      plan.placed.length > 0
        ? await store.nextMirrorRevisions(plan.placed.map((p) => idOf(p.key)))
        : new Map<string, number>();
    counts.revisionBatches += plan.placed.length > 0 ? 1 : 0;

    const jobs: (() => Promise<void>)[] = [];
    const modelOf = new Map(requests.map((r) => [r.key, r.gpuModel]));
    for (const p of plan.placed) {
      const s = bySession.get(p.key) as Session;
      const gpuModel = modelOf.get(p.key) as string;
      const id = idOf(p.key);
      const revision = revisions.get(id);
      jobs.push(async () => {
        const { status, events } = placedStatus(s, p, gpuModel, this.#d.now());
        // A fresh placement: what was remembered of an earlier mirror is stale, and its mirror is written
        // at the revision just taken. Both before the write, because the write's own watch event may
        // start the reconcile that dispatches at once.
        memory.mirrors.delete(id);
        // Reports are taken from that revision on: the earlier mirror's (its Terminated, when a session is
        // placed again on the same cluster after a lost node) would otherwise read as this mirror lost.
        const before = memory.mirrorStates.get(id);
        if (revision !== undefined) {
          memory.reserved.set(id, revision);
          memory.mirrorStates.set(id, { revision, restarts: before?.restarts ?? 0 });
        }
        let written: Session | undefined;
        try {
          written = await this.#d.writeStatus(s, status, events);
        } finally {
          if (!written && memory.reserved.get(id) === revision) {
            memory.reserved.delete(id);
            if (before) memory.mirrorStates.set(id, before);
            else memory.mirrorStates.delete(id);
          }
        }
        if (!written) return; // changed meanwhile, or written meanwhile: a later pass sees it afresh
        counts.placements++;
        // Dispatch goes through the session's own reconcile (Starting, no mirror yet → write it), so
        // that one key is never worked on twice at once.
        this.#d.requeue(p.key);
      });
    }
    for (const w of plan.waiting) {
      const s = bySession.get(w.key) as Session;
      const { status, events } = waitingStatus(s, w, now, queueSince(s, now));
      if (status) jobs.push(async () => void (await this.#d.writeStatus(s, status, events)));
    }
    for (const s of waitingOnCatalog) {
      const { status, events } = waitingStatus(
        s,
        {
          position: 1,
          reason: "NoMatchingGpuModel",
          message: `the offering ${s.spec.offering} or preset ${s.spec.preset} no longer exists`,
        },
        now,
      );
      if (status) jobs.push(async () => void (await this.#d.writeStatus(s, status, events)));
    }
    let failed = 0;
    await runLimited(jobs, this.#d.options.concurrency, (err) => {
      failed++;
      this.#d.log.warn({ err: String(err) }, "placement write failed");
    });
    // Not a conflict (those see fresh data on the next pass, which their own change brings): a failed
    // write changed nothing, so nothing would bring that pass. The retry does.
    if (failed > 0) throw new Error(`${failed} placement write(s) failed`);
  }
}

/**
 * Whether a change of a Session can change a placement pass's outcome: its intent or priority, or a
 * phase change that makes it want a GPU, stop wanting one, or take or give back GPUs. A move between
 * two phases that hold GPUs on the same cluster (Starting → Running, Running → Restarting) cannot.
 */
export function placementMatters(previous: Session, next: Session): boolean {
  if (previous.spec.desiredState !== next.spec.desiredState || previous.spec.priority !== next.spec.priority)
    return true;
  const a = phaseOf(previous);
  const b = phaseOf(next);
  if (a === b) return false;
  const holding = (s: Session, p: typeof a) => s.status?.cluster !== undefined && HOLDING_PHASES.includes(p);
  return !(holding(previous, a) && holding(next, b) && previous.status?.cluster === next.status?.cluster);
}

async function runLimited(
  jobs: (() => Promise<void>)[],
  limit: number,
  onError: (err: unknown) => void,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++] as () => Promise<void>;
      await job().catch(onError);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
}
