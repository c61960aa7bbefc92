// The management cluster's session controller (run by the leader-elected worker), wired from its parts
// the way kueue splits its scheduler:
//   - observed.ts: what it watches (Sessions, Clusters, catalog) and reads from Postgres (clusters'
//     liveness, inventory, operators' reports); memory.ts: the little it must remember besides;
//   - placement-pass.ts: places waiting sessions in one pass over the whole queue (placement/plan.ts);
//   - reconciler.ts: reconciles each session's status from its reports (sessions/lifecycle.ts);
//   - dispatch.ts: applies, restarts and deletes the session's mirror on its GPU cluster;
//   - claims-pass.ts: the volumes' claims: bound where a mirror lands, released when idle, purged after a
//     volume's grace (the decisions in claims.ts);
//   - event-recorder.ts: posts the Kubernetes Events the decisions name.
// The decisions are pure functions; the parts only observe and apply. Level-based: every session is
// looked at again on every resync, and what is observed wins over what is remembered.
import type { Cluster, Session } from "@berth/crds";
import { sessionIdOf, sessionPath } from "@berth/crds";
import type { Logger } from "pino";
import type { KubeApi } from "../kube/client.ts";
import type { InformerEvent, KubeObject } from "../kube/informer.ts";
import { PeriodicPass } from "../kube/periodic.ts";
import { WorkQueue } from "../kube/workqueue.ts";
import { ClaimsPass } from "./claims-pass.ts";
import { GpuClusterClients } from "./cluster-clients.ts";
import { Dispatch } from "./dispatch.ts";
import { EventRecorder } from "./event-recorder.ts";
import { behindRows } from "./history.ts";
import { SessionMemory } from "./memory.ts";
import { Observed } from "./observed.ts";
import { DEFAULT_CONTROLLER_OPTIONS, noWrites, type SessionControllerOptions, type WriteCounts } from "./options.ts";
import { PlacementPass, placementMatters } from "./placement-pass.ts";
import { SessionReconciler } from "./reconciler.ts";
import type { SessionStore } from "./store.ts";

export { DEFAULT_CONTROLLER_OPTIONS, type SessionControllerOptions, type WriteCounts } from "./options.ts";
export { placementMatters } from "./placement-pass.ts";

/** Old stream events are purged this often. */
const PURGE_MS = 10 * 60_000;
/** A create writes its row, then its resource, within one request: a row this old without one was cut off. */
const UNMADE_AFTER_MS = 2 * 60_000;
/** How far back the sweep looks (a row older than this was swept by an earlier leader, or never will be). */
const UNMADE_LOOKBACK_MS = 24 * 3_600_000;

export interface SessionControllerDeps {
  kube: KubeApi;
  store: SessionStore;
  /**
   * A registered GPU cluster's client, from its stored credential: asked on every use, so the process's
   * service (which keeps it, and owns its connections) decides when a changed credential makes a new one.
   */
  clusterClient(cluster: Cluster): Promise<KubeApi>;
  log: Logger;
  clock?: { now(): Date };
  options?: Partial<SessionControllerOptions>;
}

export class SessionController {
  readonly #d: SessionControllerDeps;
  readonly #o: SessionControllerOptions;
  readonly #log: Logger;
  readonly #now: () => Date;
  readonly #observed: Observed;
  readonly #memory = new SessionMemory();
  readonly #queue: WorkQueue;
  readonly #placement: PlacementPass;
  readonly #events: EventRecorder;
  readonly #clients: GpuClusterClients;
  readonly #claims: ClaimsPass;
  readonly #passes: PeriodicPass[] = [];
  #unlisten: (() => Promise<void>) | undefined;
  #started = false;
  #stopped = false;
  readonly counts: WriteCounts = noWrites();

  constructor(d: SessionControllerDeps) {
    this.#d = d;
    this.#o = { ...DEFAULT_CONTROLLER_OPTIONS, ...d.options };
    this.#log = d.log.child({ controller: "sessions" });
    const clock = d.clock ?? { now: () => new Date() };
    this.#now = () => clock.now();
    const memory = this.#memory;
    this.#observed = new Observed({
      kube: d.kube,
      store: d.store,
      memory,
      log: this.#log,
      now: this.#now,
      reportGraceMs: this.#o.reportGraceMs,
      on: { session: (e) => this.#onSession(e), placementInput: () => this.schedulePlacement() },
    });
    this.#events = new EventRecorder({
      kube: d.kube,
      log: this.#log,
      now: this.#now,
      component: this.#o.component,
      counts: this.counts,
    });
    this.#clients = new GpuClusterClients({ observed: this.#observed, clusterClient: d.clusterClient });
    this.#claims = new ClaimsPass({
      management: d.kube,
      observed: this.#observed,
      clients: this.#clients,
      counts: this.counts,
      namespace: this.#o.sessionsNamespace,
      claimIdleMs: this.#o.claimIdleMs,
      now: this.#now,
      schedulePlacement: () => this.schedulePlacement(),
    });
    const dispatch = new Dispatch({
      store: d.store,
      observed: this.#observed,
      memory,
      counts: this.counts,
      clients: this.#clients,
      claims: this.#claims,
      namespace: this.#o.sessionsNamespace,
      fieldManager: this.#o.component,
      requeue: (key) => this.#queue.add(key),
      schedulePlacement: () => this.schedulePlacement(),
    });
    const reconciler = new SessionReconciler({
      kube: d.kube,
      store: d.store,
      observed: this.#observed,
      memory,
      dispatch,
      events: this.#events,
      counts: this.counts,
      log: this.#log,
      now: this.#now,
      timing: this.#o.timing,
      schedulePlacement: () => this.schedulePlacement(),
    });
    this.#placement = new PlacementPass({
      store: d.store,
      observed: this.#observed,
      memory,
      counts: this.counts,
      log: this.#log,
      now: this.#now,
      options: this.#o,
      writeStatus: (s, status, events) => reconciler.writeStatus(s, status, events),
      requeue: (key) => this.#queue.add(key),
    });
    this.#queue = new WorkQueue({
      // Held until start() has read the mirror revisions (memory.mirrorStates): the informers' first list
      // queues every session, and a reconcile before that read would find no revision to read reports
      // against, drop them all and write the session's mirror again (docs/dev/sessions.md, "A new leader").
      held: true,
      concurrency: this.#o.concurrency,
      process: (key) => reconciler.reconcile(key),
      onError: (key, err, attempt) => this.#log.warn({ key, attempt, err: String(err) }, "reconcile failed; retrying"),
    });
  }

  /** The Sessions as the controller's informer has them. */
  get sessions() {
    return this.#observed.sessions;
  }

  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    const o = this.#observed;
    await this.#refreshClusters();
    await this.#refreshInventory();
    for (const r of await this.#d.store.reports()) o.putReport(r);
    this.#unlisten = await this.#d.store.listen({
      reports: (ids) => void this.#onReports(ids),
      inventory: () => void this.#onInventory(),
    });
    // Before the informers list: an interim status is never newer than the resource they then see, so
    // one that no longer follows it was superseded (not yet to come).
    await this.#d.store.fence();
    for (const [id, interim] of await this.#d.store.interimStatuses()) this.#memory.interim.set(id, interim);
    await o.sync(60_000);
    const ids = [...o.sessions.store.values()].map((s) => sessionIdOf(s.metadata.name as string));
    const [mirrorStates, recorded] = await Promise.all([
      this.#d.store.mirrorStates(ids),
      this.#d.store.recordedPhases(ids),
    ]);
    for (const [id, st] of mirrorStates) this.#memory.mirrorStates.set(id, st);
    behindRows(this.#memory, o.sessionsNow(), recorded);
    for (const key of o.sessions.store.keys()) this.#queue.add(key);
    this.#queue.release();
    this.#placement.enable();
    this.schedulePlacement();
    this.#every(this.#o.pollMs, async () => {
      await this.#refreshClusters();
      await this.#refreshInventory();
    });
    this.#every(this.#o.resyncMs, async () => {
      for (const r of await this.#d.store.reports()) o.putReport(r);
      await this.#refreshInventory(true);
      for (const key of o.sessions.store.keys()) this.#queue.add(key);
      this.schedulePlacement();
    });
    // Passes never overlap: a release waiting on a slow cluster is not begun again beside it.
    this.#every(Math.min(this.#o.pollMs, this.#o.claimIdleMs), () => this.#claims.run());
    this.#every(PURGE_MS, async () => {
      await this.#d.store.purgeEvents(new Date(this.#now().getTime() - this.#o.eventRetentionMs));
    });
    this.#every(this.#o.resyncMs, async () => {
      await this.sweepUnmadeCreates();
    });
    this.#log.info({ sessions: o.sessions.store.size, clusters: o.clusterRecords.size }, "session controller started");
  }

  /**
   * Rows whose create never wrote its resource (the API died between the two), older than any create
   * takes: failed, so they stop counting as live against limits and credits. The informer's word is
   * checked with a read, since a watch may lag. Returns how many it ended.
   */
  async sweepUnmadeCreates(): Promise<number> {
    const o = this.#observed;
    if (!o.sessions.synced) return 0;
    const now = this.#now().getTime();
    const rows = await this.#d.store.pendingRows(new Date(now - UNMADE_LOOKBACK_MS), new Date(now - UNMADE_AFTER_MS));
    let ended = 0;
    for (const r of rows) {
      if (o.sessions.store.has(`${r.namespace}/${r.name}`)) continue;
      const got = await this.#d.kube.request("GET", sessionPath(r.namespace, r.name));
      if (got.status !== 404) continue;
      if (
        await this.#d.store.failUnmadeCreate(
          r.id,
          "its create was interrupted before the Session resource was written; start it again",
          this.#now(),
        )
      )
        ended++;
    }
    if (ended > 0) this.#log.warn({ sessions: ended }, "ended sessions whose create never wrote their resource");
    return ended;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    const passes = Promise.all(this.#passes.map((p) => p.stop()));
    const placing = this.#placement.stop();
    await this.#unlisten?.();
    await this.#queue.stop();
    await placing;
    await passes;
    await this.#observed.stop();
    await this.#events.idle();
  }

  /** Resolves when nothing is queued, running, being placed or waiting to be recorded as an Event. */
  async idle(): Promise<void> {
    // Each part's idle() resolves when it is; one part's work may hand the others more (a placement
    // requeues sessions, a reconcile asks for a pass), so wait until all are idle at once.
    while (this.#queue.length > 0 || this.#placement.busy || this.#events.busy) {
      await this.#queue.drained();
      await this.#placement.idle();
      await this.#events.idle();
    }
  }

  /** How long the last placement passes took, in ms, oldest first (up to 1,000): for the worker's metrics. */
  placementPassMs(): readonly number[] {
    return this.#placement.recentMs;
  }

  /** Runs a placement pass soon; passes never overlap, and a request during one runs another after it. */
  schedulePlacement(): void {
    if (this.#stopped || !this.#started) return;
    this.#placement.schedule();
  }

  #every(ms: number, pass: () => Promise<void>): void {
    const p = new PeriodicPass({
      intervalMs: ms,
      pass,
      onError: (err) => this.#log.warn({ err: String(err) }, "periodic task failed"),
      immediate: false,
      unref: true,
    });
    p.start();
    this.#passes.push(p);
  }

  // --- observations ------------------------------------------------------------------------------------

  #onSession(e: InformerEvent<Session & KubeObject>): void {
    const id = sessionIdOf(e.key.split("/")[1] ?? "");
    if (e.type === "delete") {
      // Gone for good (retention): forget everything kept about it.
      this.#observed.reports.delete(id);
      this.#memory.forget(id);
      return;
    }
    this.#queue.add(e.key);
    // As each stood: Pending → Running on the resource was Starting → Running, which holds the same GPUs.
    const o = this.#observed;
    if (!e.previous || placementMatters(o.effective(e.previous), o.effective(e.object))) this.schedulePlacement();
  }

  async #onReports(ids: string[]): Promise<void> {
    const changed = new Set<string>();
    let gone = false;
    try {
      for (const r of await this.#d.store.reports(ids))
        if (this.#observed.putReport(r)) {
          changed.add(r.sessionId);
          gone ||= r.phase === "Terminated";
        }
    } catch (err) {
      this.#log.warn({ err: String(err) }, "reading reports failed; the resync catches up");
      return;
    }
    // A stray mirror's GPUs count as held until it is reported gone.
    if (gone) this.schedulePlacement();
    // Only what changed: every operator heartbeat re-sends every state, and the resync looks at all.
    if (changed.size > 0) for (const key of this.#observed.keysOf(changed)) this.#queue.add(key);
  }

  async #onInventory(): Promise<void> {
    try {
      await this.#refreshInventory();
    } catch (err) {
      this.#log.warn({ err: String(err) }, "reading the inventory failed");
    }
  }

  async #refreshClusters(): Promise<void> {
    const o = this.#observed;
    // A cluster that started or stopped reporting: its sessions are looked at again.
    const changed = await o.refreshClusters();
    if (changed.size === 0) return;
    // And those it still has a mirror of (a stray is deleted once its cluster answers again).
    const live = (s: Session) =>
      o.reports
        .get(sessionIdOf(s.metadata.name as string))
        ?.some((r) => r.phase !== "Terminated" && changed.has(r.clusterId));
    for (const [key, s] of o.sessionsNow())
      if ((s.status?.cluster && changed.has(s.status.cluster)) || live(s)) this.#queue.add(key);
    this.schedulePlacement();
  }

  /** `always`: look at every session and place even when nothing changed (start-up, the resync). */
  async #refreshInventory(always = false): Promise<void> {
    const o = this.#observed;
    if (!(await o.refreshInventory(always))) return;
    // Sessions on nodes that vanished or went not-ready are looked at (node lost).
    for (const [key, s] of o.sessionsNow())
      if ((s.status?.node || s.status?.gpuAssignment) && o.nodeLost(s)) this.#queue.add(key);
    this.schedulePlacement();
  }
}

export type { StatusReport } from "./lifecycle.ts";
