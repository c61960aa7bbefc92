// The management cluster's session controller (run by the leader-elected worker): watches Sessions and
// the catalog, hears operators' reports and inventory changes through Postgres, and
//   - places waiting sessions in one pass over the whole queue (placement/plan.ts),
//   - reconciles each session's status from its reports (sessions/lifecycle.ts),
//   - writes, restarts and deletes the session's mirror on its GPU cluster (dispatch).
// The decisions are pure functions; this file only observes and applies. Status is written with the
// resourceVersion read (a stale leader's or a stale cache's write fails with 409 and is retried from
// fresh data), which is why a session is never placed twice.
import {
  type Cluster,
  ClusterKind,
  type Image,
  ImageKind,
  type Offering,
  OfferingKind,
  type ResourcePreset,
  ResourcePresetKind,
  type Session,
  SessionKind,
  type SessionMirror,
  SessionMirrorKind,
  type Volume,
  VolumeKind,
} from "@berth/crds";
import type { Logger } from "pino";
import type { KubeApi } from "../kube/client.ts";
import { Informer, type KubeObject, keyOf } from "../kube/informer.ts";
import { WorkQueue } from "../kube/workqueue.ts";
import { computeCapacity, type Holding, type InventoryNodeView } from "../placement/capacity.ts";
import { DEFAULT_CONSTRAINTS } from "../placement/constraints.ts";
import { planPlacement } from "../placement/plan.ts";
import type { Constraint, PlacementPolicy, PlacementRequest } from "../placement/types.ts";
import {
  DEFAULT_TIMING,
  HOLDING_PHASES,
  type KubeEventSpec,
  type LifecycleTiming,
  type MirrorOp,
  phaseOf,
  placedStatus,
  planSession,
  queueSince,
  type StatusReport,
  waitingStatus,
} from "./lifecycle.ts";
import { ANNOTATIONS, DEFAULT_SESSIONS_NAMESPACE, LABELS, labelValue, MIRROR_FINALIZER, sessionIdOf } from "./names.ts";
import type { ClusterRecord, MirrorState, SessionStore, StoredReport } from "./store.ts";

export interface SessionControllerOptions {
  policy: PlacementPolicy;
  constraints: readonly Constraint[];
  timing: LifecycleTiming;
  /** A cluster whose operator has not called for this long is "not reporting": its sessions turn Unknown. */
  reportGraceMs: number;
  /** Sessions reconciled at once. */
  concurrency: number;
  /** Mirrors' namespace on GPU clusters. */
  sessionsNamespace: string;
  /** Every session is looked at again this often, changed or not (level-based safety net). */
  resyncMs: number;
  /** Cluster liveness and inventory are re-read this often even without notifications. */
  pollMs: number;
  /** Stream events are kept this long. */
  eventRetentionMs: number;
  /** Kubernetes Events' reporting component. */
  component: string;
}

export const DEFAULT_CONTROLLER_OPTIONS: SessionControllerOptions = {
  policy: "binpack",
  constraints: DEFAULT_CONSTRAINTS,
  timing: DEFAULT_TIMING,
  reportGraceMs: 60_000,
  concurrency: 64,
  sessionsNamespace: DEFAULT_SESSIONS_NAMESPACE,
  resyncMs: 60_000,
  pollMs: 5_000,
  eventRetentionMs: 24 * 3600_000,
  component: "berth-worker",
};

export interface SessionControllerDeps {
  kube: KubeApi;
  store: SessionStore;
  /** A client for a registered GPU cluster, from its stored credential. */
  clusterClient(cluster: Cluster): Promise<KubeApi>;
  log: Logger;
  clock?: { now(): Date };
  options?: Partial<SessionControllerOptions>;
}

const g = (k: { group: string; version: string; plural: string }) => `/apis/${k.group}/${k.version}/${k.plural}`;

/** Counters for tests and the bench: what the worker wrote where. */
export interface WriteCounts {
  statusWrites: number;
  conflicts: number;
  events: number;
  mirrorCreates: number;
  mirrorUpdates: number;
  mirrorDeletes: number;
  resourceDeletes: number;
  placements: number;
  placementPasses: number;
  /** Round trips that took mirror revisions for a whole placement pass. */
  revisionBatches: number;
}

export class SessionController {
  readonly #d: SessionControllerDeps;
  readonly #o: SessionControllerOptions;
  readonly #log: Logger;
  readonly #now: () => Date;
  readonly sessions: Informer<Session & KubeObject>;
  readonly #clustersCr: Informer<Cluster & KubeObject>;
  readonly #offerings: Informer<Offering & KubeObject>;
  readonly #presets: Informer<ResourcePreset & KubeObject>;
  readonly #images: Informer<Image & KubeObject>;
  readonly #volumes: Informer<Volume & KubeObject>;
  readonly #queue: WorkQueue;
  readonly #byId = new Map<string, string>(); // session id -> key
  #clusterRecords = new Map<string, ClusterRecord>();
  #inventory: Awaited<ReturnType<SessionStore["inventory"]>> = [];
  /** The inventory's nodes by `cluster/node`, and what it looked like (a refresh that changed nothing places nothing). */
  #nodes = new Map<string, InventoryNodeView>();
  #inventorySignature = "";
  readonly #reports = new Map<string, StoredReport[]>(); // session id -> per cluster
  readonly #mirrorStates = new Map<string, MirrorState>();
  /**
   * Revisions a placement pass took (in one batch) for the mirrors its placements dispatch: the session's
   * next ensure writes its mirror at this revision instead of taking one more. Session id → revision.
   */
  readonly #reserved = new Map<string, number>();
  /**
   * Placements whose history row is still being written (true once written, false if that failed). The
   * mirror waits for it: the internal plane takes an operator's reports only for sessions whose row
   * names its cluster, so a mirror dispatched first has its pod's reports refused (the whole batch).
   */
  readonly #recording = new Map<string, Promise<boolean>>();
  /**
   * Sessions whose written status is not in their history row (recording it failed): the status before
   * the first such write. The informer has the new status already, so a retry sees no change: the next
   * reconcile or write records from this one instead.
   */
  readonly #unrecorded = new Map<string, Session>();
  readonly #mirrors = new Map<string, { cluster: string; state: "present" | "absent" | "deleting" }>();
  /** Stray mirrors a DELETE found gone (404): session id → cluster → `at` of the report it answered. */
  readonly #straysGone = new Map<string, Map<string, string>>();
  readonly #unschedulableSince = new Map<string, Date>();
  readonly #avoid = new Map<string, { cluster: string; until: number }>();
  readonly #clients = new Map<string, Promise<KubeApi>>();
  readonly #timers: NodeJS.Timeout[] = [];
  #unlisten: (() => Promise<void>) | undefined;
  #placing: Promise<void> | undefined;
  #placeAgain = false;
  #placeTimer: NodeJS.Timeout | undefined;
  #placeRetry: NodeJS.Timeout | undefined;
  #started = false;
  #stopped = false;
  readonly counts: WriteCounts = {
    statusWrites: 0,
    conflicts: 0,
    events: 0,
    mirrorCreates: 0,
    mirrorUpdates: 0,
    mirrorDeletes: 0,
    resourceDeletes: 0,
    placements: 0,
    placementPasses: 0,
    revisionBatches: 0,
  };
  readonly #eventQueue: (() => Promise<void>)[] = [];
  #eventWorkers = 0;

  constructor(d: SessionControllerDeps) {
    this.#d = d;
    this.#o = { ...DEFAULT_CONTROLLER_OPTIONS, ...d.options };
    this.#log = d.log.child({ controller: "sessions" });
    this.#now = () => (d.clock ?? { now: () => new Date() }).now();
    const onError = (what: string) => (err: unknown, msg: string) =>
      this.#log.warn({ err: String(err), informer: what }, msg);
    const parse =
      <T>(schema: { parse(o: unknown): T }) =>
      (o: KubeObject) =>
        schema.parse(o) as T & KubeObject;
    this.sessions = new Informer({
      kube: d.kube,
      path: g(SessionKind),
      parse: parse(SessionKind.schema),
      onEvent: (e) =>
        this.#onSession(
          e.key,
          e.type === "delete" ? undefined : e.object,
          e.type === "upsert" ? e.previous : undefined,
        ),
      onError: onError("sessions"),
    });
    this.#clustersCr = new Informer({
      kube: d.kube,
      path: g(ClusterKind),
      parse: parse(ClusterKind.schema),
      onEvent: () => this.schedulePlacement(),
      onError: onError("clusters"),
    });
    this.#offerings = new Informer({
      kube: d.kube,
      path: g(OfferingKind),
      parse: parse(OfferingKind.schema),
      onEvent: () => this.schedulePlacement(),
      onError: onError("offerings"),
    });
    this.#presets = new Informer({
      kube: d.kube,
      path: g(ResourcePresetKind),
      parse: parse(ResourcePresetKind.schema),
      onEvent: () => {},
      onError: onError("presets"),
    });
    this.#images = new Informer({
      kube: d.kube,
      path: g(ImageKind),
      parse: parse(ImageKind.schema),
      onEvent: () => {},
      onError: onError("images"),
    });
    this.#volumes = new Informer({
      kube: d.kube,
      path: g(VolumeKind),
      parse: parse(VolumeKind.schema),
      onEvent: () => this.schedulePlacement(),
      onError: onError("volumes"),
    });
    this.#queue = new WorkQueue({
      concurrency: this.#o.concurrency,
      process: (key) => this.#reconcile(key),
      onError: (key, err, attempt) => this.#log.warn({ key, attempt, err: String(err) }, "reconcile failed; retrying"),
    });
  }

  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    await this.#refreshClusters();
    await this.#refreshInventory();
    for (const r of await this.#d.store.reports()) this.#putReport(r);
    this.#unlisten = await this.#d.store.listen({
      reports: (ids) => void this.#onReports(ids),
      inventory: () => void this.#onInventory(),
    });
    const informers = [this.#clustersCr, this.#offerings, this.#presets, this.#images, this.#volumes, this.sessions];
    for (const i of informers) i.start();
    await Promise.all(informers.map((i) => i.waitForSync(60_000)));
    const ids = [...this.sessions.store.values()].map((s) => sessionIdOf(s.metadata.name as string));
    for (const [id, st] of await this.#d.store.mirrorStates(ids)) this.#mirrorStates.set(id, st);
    for (const key of this.sessions.store.keys()) this.#queue.add(key);
    this.schedulePlacement();
    this.#every(this.#o.pollMs, async () => {
      await this.#refreshClusters();
      await this.#refreshInventory();
    });
    this.#every(this.#o.resyncMs, async () => {
      for (const r of await this.#d.store.reports()) this.#putReport(r);
      await this.#refreshInventory(true);
      for (const key of this.sessions.store.keys()) this.#queue.add(key);
      this.schedulePlacement();
    });
    this.#every(10 * 60_000, async () => {
      await this.#d.store.purgeEvents(new Date(this.#now().getTime() - this.#o.eventRetentionMs));
    });
    this.#log.info(
      { sessions: this.sessions.store.size, clusters: this.#clusterRecords.size },
      "session controller started",
    );
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const t of this.#timers) clearInterval(t);
    clearTimeout(this.#placeTimer);
    clearTimeout(this.#placeRetry);
    await this.#unlisten?.();
    await this.#queue.stop();
    await this.#placing;
    await Promise.all(
      [this.sessions, this.#clustersCr, this.#offerings, this.#presets, this.#images, this.#volumes].map((i) =>
        i.stop(),
      ),
    );
    while (this.#eventWorkers > 0) await new Promise((r) => setTimeout(r, 10));
    for (const c of this.#clients.values()) void c.then((k) => (k as { close?: () => void }).close?.()).catch(() => {});
  }

  /** Resolves when nothing is queued, running, being placed or waiting to be recorded as an Event. */
  async idle(): Promise<void> {
    for (;;) {
      await this.#queue.drained();
      await this.#placing;
      if (
        this.#queue.length === 0 &&
        !this.#placing &&
        !this.#placeTimer &&
        this.#eventQueue.length === 0 &&
        this.#eventWorkers === 0
      )
        return;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  #every(ms: number, fn: () => Promise<void>): void {
    const t = setInterval(() => {
      if (!this.#stopped) fn().catch((err: unknown) => this.#log.warn({ err: String(err) }, "periodic task failed"));
    }, ms);
    t.unref?.();
    this.#timers.push(t);
  }

  // --- observations ------------------------------------------------------------------------------------

  #onSession(key: string, s: Session | undefined, previous: Session | undefined): void {
    const name = key.split("/")[1] ?? "";
    const id = sessionIdOf(name);
    if (!s) {
      // Gone for good (retention): forget everything kept about it.
      this.#byId.delete(id);
      this.#reports.delete(id);
      this.#mirrorStates.delete(id);
      this.#reserved.delete(id);
      this.#recording.delete(id);
      this.#unrecorded.delete(id);
      this.#mirrors.delete(id);
      this.#straysGone.delete(id);
      this.#unschedulableSince.delete(id);
      this.#avoid.delete(key);
      return;
    }
    this.#byId.set(id, key);
    this.#queue.add(key);
    if (!previous || placementMatters(previous, s)) this.schedulePlacement();
  }

  /** Keeps a report; false when it says what the one kept already said (an operator's heartbeat). */
  #putReport(r: StoredReport): boolean {
    const before = this.#reports.get(r.sessionId) ?? [];
    const same = before.find((x) => x.clusterId === r.clusterId);
    const list = before.filter((x) => x !== same);
    list.push(r);
    this.#reports.set(r.sessionId, list);
    if (r.reason === "Unschedulable") {
      if (!this.#unschedulableSince.has(r.sessionId)) this.#unschedulableSince.set(r.sessionId, this.#now());
    } else this.#unschedulableSince.delete(r.sessionId);
    return !same || !sameReport(same, r);
  }

  async #onReports(ids: string[]): Promise<void> {
    const changed = new Set<string>();
    let gone = false;
    try {
      for (const r of await this.#d.store.reports(ids))
        if (this.#putReport(r)) {
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
    for (const id of changed) {
      const key = this.#byId.get(id);
      if (key) this.#queue.add(key);
    }
  }

  async #onInventory(): Promise<void> {
    try {
      await this.#refreshInventory();
    } catch (err) {
      this.#log.warn({ err: String(err) }, "reading the inventory failed");
    }
  }

  async #refreshClusters(): Promise<void> {
    const before = this.#clusterRecords;
    const next = new Map((await this.#d.store.clusters()).map((c) => [c.id, c]));
    this.#clusterRecords = next;
    // A cluster that started or stopped reporting: its sessions are looked at again.
    const changed = new Set<string>();
    for (const [id, c] of next)
      if (this.#reporting(c) !== (before.get(id) ? this.#reporting(before.get(id) as ClusterRecord) : false))
        changed.add(id);
    for (const id of before.keys()) if (!next.has(id)) changed.add(id);
    if (changed.size > 0) {
      // And those it still has a mirror of (a stray is deleted once its cluster answers again).
      const live = (s: Session) =>
        this.#reports
          .get(sessionIdOf(s.metadata.name as string))
          ?.some((r) => r.phase !== "Terminated" && changed.has(r.clusterId));
      for (const [key, s] of this.sessions.store)
        if ((s.status?.cluster && changed.has(s.status.cluster)) || live(s)) this.#queue.add(key);
      this.schedulePlacement();
    }
  }

  /** `always`: look at every session and place even when nothing changed (start-up, the resync). */
  async #refreshInventory(always = false): Promise<void> {
    const inventory = await this.#d.store.inventory();
    const signature = JSON.stringify(inventory);
    if (!always && signature === this.#inventorySignature) return;
    this.#inventory = inventory;
    this.#inventorySignature = signature;
    this.#nodes = new Map(inventory.map((n) => [`${n.clusterId}/${n.name}`, n]));
    // Sessions on nodes that vanished or went not-ready are looked at (node lost).
    for (const [key, s] of this.sessions.store) if (s.status?.node && this.#nodeLost(s)) this.#queue.add(key);
    this.schedulePlacement();
  }

  #reporting(c: ClusterRecord | undefined): boolean {
    return !!c?.lastReportAt && this.#now().getTime() - c.lastReportAt.getTime() < this.#o.reportGraceMs;
  }

  #nodeLost(s: Session): boolean {
    const cluster = s.status?.cluster;
    const node = s.status?.node;
    if (!cluster || !node) return false;
    // Only when the cluster reports: a silent cluster makes its sessions Unknown, not lost.
    if (!this.#reporting(this.#clusterRecords.get(cluster))) return false;
    return !this.#nodes.get(`${cluster}/${node}`)?.ready;
  }

  #clusterCr(id: string): Cluster | undefined {
    for (const c of this.#clustersCr.store.values()) if (c.spec.id === id) return c;
    return undefined;
  }

  // --- per-session reconcile ---------------------------------------------------------------------------

  async #reconcile(key: string): Promise<{ requeueAfterMs?: number } | undefined> {
    const s = this.sessions.store.get(key);
    if (!s) return undefined;
    const id = sessionIdOf(s.metadata.name as string);
    // The history lagging must not hold the session up (a pause must still free its GPU while Postgres
    // fails): the entry stays, and the next reconcile or status write records it.
    await this.#recordUnrecorded(id, s).catch((err: unknown) =>
      this.#log.warn({ err: String(err), session: id }, "recording a transition failed; retried later"),
    );
    const cluster = s.status?.cluster;
    const mirrorState = this.#mirrorStates.get(id) ?? { revision: 0, restarts: 0 };
    const report = cluster
      ? this.#reports
          .get(id)
          ?.find((r) => r.clusterId === cluster && r.revision >= mirrorState.revision && mirrorState.revision > 0)
      : undefined;
    const record = cluster ? this.#clusterRecords.get(cluster) : undefined;
    const mirror = this.#mirrors.get(id);
    const plan = planSession({
      session: s,
      now: this.#now(),
      ...(report ? { report } : {}),
      ...(cluster ? { cluster: { registered: !!record?.registered, reporting: this.#reporting(record) } } : {}),
      mirror:
        mirror && mirror.cluster === cluster ? (mirror.state === "deleting" ? "present" : mirror.state) : "unknown",
      nodeLost: this.#nodeLost(s),
      ...(this.#unschedulableSince.has(id) ? { unschedulableSince: this.#unschedulableSince.get(id) as Date } : {}),
      restartsRequested: Number(s.metadata.annotations?.[ANNOTATIONS.restarts] ?? "0"),
      restartsApplied: mirrorState.restarts,
      timing: this.#o.timing,
    });

    // Before the write: the write's own watch event can start a placement pass that must see it.
    if (plan.avoidCluster) this.#avoid.set(key, { cluster: plan.avoidCluster, until: Date.now() + 5 * 60_000 });
    let current: Session = s;
    if (plan.status) {
      const written = await this.#writeStatus(s, plan.status, plan.events);
      if (!written) return { requeueAfterMs: 200 };
      current = written;
    } else this.#emit(s, plan.events);

    // The operator saw the current mirror go (MirrorLost): what was cached of it is stale, and ensure
    // would trust it and write nothing.
    if (plan.mirror?.op === "ensure" && report?.phase === "Terminated" && cluster)
      this.#mirrors.set(id, { cluster, state: "absent" });
    if (plan.mirror && cluster) {
      try {
        await this.#mirrorOp(current, cluster, plan.mirror);
      } catch (e) {
        if (e instanceof RetryAfter) return { requeueAfterMs: e.ms };
        throw e;
      }
    }
    if (plan.needsPlacement) this.schedulePlacement();
    // Level-based: the delete that came with a phase change is tried once; a mirror still reported where
    // the session wants no pod is deleted again on every reconcile (and resync) until it is gone.
    let strayError: unknown;
    for (const r of this.#strays(current, id)) {
      if (r.clusterId === cluster && plan.mirror?.op === "delete") continue; // just done
      await this.#mirrorOp(current, r.clusterId, { op: "delete", propagation: "Background" }, r.at).catch(
        (e: unknown) => {
          strayError ??= e;
        },
      );
    }
    if (strayError) throw strayError;
    if (plan.deleteResource) await this.#deleteResource(s);
    return plan.requeueAfterMs !== undefined ? { requeueAfterMs: plan.requeueAfterMs } : undefined;
  }

  /** PUT /status with the resourceVersion read; undefined on a conflict (the caller retries on fresh data). */
  async #writeStatus(
    s: Session,
    status: NonNullable<Session["status"]>,
    events: KubeEventSpec[],
  ): Promise<Session | undefined> {
    const ns = s.metadata.namespace as string;
    const name = s.metadata.name as string;
    const body = { ...s, status };
    const res = await this.#d.kube.request<KubeObject>(
      "PUT",
      `/apis/${SessionKind.group}/${SessionKind.version}/namespaces/${ns}/sessions/${name}/status`,
      { body },
    );
    if (res.status === 409 || res.status === 404) {
      this.counts.conflicts++;
      return undefined;
    }
    if (res.status !== 200)
      throw new Error(`writing the status of ${ns}/${name}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    this.counts.statusWrites++;
    // Registered before the informer hears of the write: that starts the session's reconcile at once.
    const id = sessionIdOf(name);
    const before = this.#unrecorded.get(id) ?? s;
    let recorded: ((ok: boolean) => void) | undefined;
    const recording =
      status.cluster !== undefined && status.cluster !== s.status?.cluster
        ? new Promise<boolean>((r) => {
            recorded = r;
          })
        : undefined;
    if (recording) this.#recording.set(id, recording);
    let after: Session;
    // Settled on every path once registered: the mirror's dispatch waits on it.
    try {
      this.sessions.observe(res.body);
      // The informer parsed it already (unless its watch brought a newer version first).
      const stored = this.sessions.store.get(`${ns}/${name}`);
      after =
        stored && stored.metadata.resourceVersion === res.body.metadata.resourceVersion
          ? stored
          : SessionKind.schema.parse(res.body);
      this.#emit(after, events);
      await this.#d.store.recordTransition(before, after);
    } catch (err) {
      this.#unrecorded.set(id, before);
      recorded?.(false);
      throw err;
    }
    if (this.#unrecorded.get(id) === before) this.#unrecorded.delete(id);
    recorded?.(true);
    if (recording && this.#recording.get(id) === recording) this.#recording.delete(id);
    return after;
  }

  /** Records the change a failed record left out (from the status before it to `s`), if any. */
  async #recordUnrecorded(id: string, s: Session): Promise<void> {
    const before = this.#unrecorded.get(id);
    if (!before) return;
    await this.#d.store.recordTransition(before, s);
    if (this.#unrecorded.get(id) === before) this.#unrecorded.delete(id);
  }

  #emit(s: Session, events: KubeEventSpec[]): void {
    for (const e of events) {
      this.#eventQueue.push(() => this.#postEvent(s, e));
      this.counts.events++;
    }
    while (this.#eventWorkers < 16 && this.#eventQueue.length > 0) {
      this.#eventWorkers++;
      void (async () => {
        try {
          for (let job = this.#eventQueue.shift(); job; job = this.#eventQueue.shift()) {
            await job().catch((err: unknown) =>
              this.#log.debug({ err: String(err) }, "a Kubernetes Event was not recorded"),
            );
          }
        } finally {
          this.#eventWorkers--;
        }
      })();
    }
  }

  /** A Kubernetes Event on the Session, as `kubectl describe` shows them. */
  async #postEvent(s: Session, e: KubeEventSpec): Promise<void> {
    const ns = s.metadata.namespace as string;
    const now = this.#now().toISOString();
    const res = await this.#d.kube.request("POST", `/api/v1/namespaces/${ns}/events`, {
      body: {
        apiVersion: "v1",
        kind: "Event",
        metadata: { generateName: `${s.metadata.name}.`, namespace: ns },
        involvedObject: {
          apiVersion: SessionKind.apiVersion,
          kind: "Session",
          name: s.metadata.name,
          namespace: ns,
          uid: s.metadata.uid,
          resourceVersion: s.metadata.resourceVersion,
        },
        type: e.type,
        reason: e.reason,
        message: e.message.slice(0, 1024),
        source: { component: this.#o.component },
        reportingComponent: `berth.dev/${this.#o.component}`,
        reportingInstance: this.#o.component,
        firstTimestamp: `${now.slice(0, 19)}Z`,
        lastTimestamp: `${now.slice(0, 19)}Z`,
        count: 1,
      },
    });
    if (res.status >= 300) throw new Error(`recording event ${e.reason}: ${res.status}`);
  }

  async #deleteResource(s: Session): Promise<void> {
    const res = await this.#d.kube.request(
      "DELETE",
      `/apis/${SessionKind.group}/${SessionKind.version}/namespaces/${s.metadata.namespace}/sessions/${s.metadata.name}`,
      {
        body: { apiVersion: "v1", kind: "DeleteOptions", preconditions: { uid: s.metadata.uid } },
      },
    );
    if (res.status >= 300 && res.status !== 404 && res.status !== 409)
      throw new Error(`deleting ${keyOf(s as KubeObject)}: ${res.status}`);
    this.counts.resourceDeletes++;
    await this.#d.store.recordDeleted(s);
  }

  // --- dispatch -----------------------------------------------------------------------------------------

  async #client(clusterId: string): Promise<KubeApi> {
    let c = this.#clients.get(clusterId);
    if (!c) {
      const cr = this.#clusterCr(clusterId);
      if (!cr) throw new Error(`cluster ${clusterId} has no Cluster resource`);
      c = this.#d.clusterClient(cr);
      this.#clients.set(clusterId, c);
      c.catch(() => this.#clients.delete(clusterId));
    }
    return c;
  }

  #mirrorPath(name?: string): string {
    return `/apis/${SessionMirrorKind.group}/${SessionMirrorKind.version}/namespaces/${this.#o.sessionsNamespace}/sessionmirrors${name ? `/${name}` : ""}`;
  }

  /** The mirror as the session's catalog resolves it now. */
  #mirrorBody(s: Session, clusterId: string, revision: number, restartCount: number): SessionMirror {
    const offering = this.#offerings.store.get(s.spec.offering);
    const preset = this.#presets.store.get(s.spec.preset);
    const image = this.#images.store.get(s.spec.image);
    if (!offering || !preset || !image)
      throw new Error(
        `catalog objects of ${s.metadata.name} are missing (offering ${s.spec.offering}, preset ${s.spec.preset}, image ${s.spec.image})`,
      );
    const gpuCount = this.#gpuCountOf(s) as number; // the offering is there (checked above)
    const volumes = s.spec.volumes.flatMap((v, i) => {
      const vol = this.#volumes.store.get(`${s.metadata.namespace}/${v.volume}`);
      const claim = vol?.status?.claimName;
      return claim
        ? [
            {
              claimName: claim,
              mountPath: v.mountPath ?? (i === 0 ? "/home/jovyan/work" : `/mnt/${v.volume}`),
              readOnly: v.readOnly,
            },
          ]
        : [];
    });
    return SessionMirrorKind.build(
      {
        name: s.metadata.name as string,
        finalizers: [MIRROR_FINALIZER],
        namespace: this.#o.sessionsNamespace,
        labels: {
          [LABELS.partOf]: "berth",
          [LABELS.sessionId]: sessionIdOf(s.metadata.name as string),
          [LABELS.owner]: labelValue(s.spec.owner),
          [LABELS.organization]: labelValue(s.spec.organization),
        },
      },
      {
        sessionId: sessionIdOf(s.metadata.name as string),
        source: { namespace: s.metadata.namespace as string, name: s.metadata.name as string },
        cluster: clusterId,
        owner: s.spec.owner,
        organization: s.spec.organization,
        ...(s.spec.project ? { project: s.spec.project } : {}),
        image: image.spec.image,
        imageKind: image.spec.kind,
        resources: { cpu: preset.spec.cpu, memory: preset.spec.memory, gpuCount, gpuModel: offering.spec.gpuModel },
        volumes,
        restartCount,
        revision,
      },
    );
  }

  /**
   * Registered clusters whose newest report on the session says its mirror is still there (not Terminated,
   * no 404 since) while the session wants no pod there: placed elsewhere, or in a phase without one
   * (Paused, Failed, Terminated, waiting). Pausing and Terminating hold it: their plan deletes it.
   */
  #strays(s: Session, id: string): StoredReport[] {
    const holds = HOLDING_PHASES.includes(phaseOf(s));
    const gone = this.#straysGone.get(id);
    return (this.#reports.get(id) ?? []).filter(
      (r) =>
        r.phase !== "Terminated" &&
        gone?.get(r.clusterId) !== r.at &&
        !(holds && s.status?.cluster === r.clusterId) &&
        this.#clusterRecords.get(r.clusterId)?.registered,
    );
  }

  /** `strayAt`: a delete of #strays, for its report of this time (its answer is not the cached mirror's). */
  async #mirrorOp(s: Session, clusterId: string, op: MirrorOp, strayAt?: string): Promise<void> {
    const stray = strayAt !== undefined;
    const id = sessionIdOf(s.metadata.name as string);
    const name = s.metadata.name as string;
    const kube = await this.#client(clusterId);
    const known = this.#mirrors.get(id);
    if (op.op === "ensure") {
      if (known?.cluster === clusterId && known.state === "present") return;
      const recording = this.#recording.get(id);
      if (recording) {
        // Its history row must name the cluster before the operator there reports on it.
        if (!(await recording)) await this.#recordUnrecorded(id, s);
        if (this.#recording.get(id) === recording) this.#recording.delete(id);
      }
      const restarts = this.#mirrorStates.get(id)?.restarts ?? 0;
      // The placement pass took it (one batch for all it placed); a later ensure (a retry, a mirror
      // written again) takes its own.
      const reserved = this.#reserved.get(id);
      this.#reserved.delete(id);
      const revision = reserved ?? (await this.#d.store.nextMirrorRevision(id));
      this.#mirrorStates.set(id, { revision, restarts });
      const res = await kube.request<SessionMirror>("POST", this.#mirrorPath(), {
        body: this.#mirrorBody(s, clusterId, revision, restarts),
      });
      if (res.status === 201) {
        this.counts.mirrorCreates++;
        this.#mirrors.set(id, { cluster: clusterId, state: "present" });
        return;
      }
      if (res.status !== 409)
        throw new Error(
          `writing the mirror of ${name} to ${clusterId}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`,
        );
      // Already there: ours (a retry, a new leader), or an earlier one still being deleted.
      const got = await kube.request<SessionMirror>("GET", this.#mirrorPath(name));
      if (got.status === 200 && !got.body.metadata.deletionTimestamp) {
        // Adopt it at our revision, so its reports count.
        const put = await kube.request("PATCH", this.#mirrorPath(name), {
          body: { spec: { revision, restartCount: restarts } },
        });
        if (put.status >= 300) throw new Error(`adopting the mirror of ${name} on ${clusterId}: ${put.status}`);
        this.counts.mirrorUpdates++;
        this.#mirrors.set(id, { cluster: clusterId, state: "present" });
        return;
      }
      // An earlier mirror of this session is still going (its pod is being removed): look again soon,
      // without the error backoff, which would grow for as long as a pod takes to go.
      throw new RetryAfter(1_000, `the mirror of ${name} on ${clusterId} is still being deleted`);
    }
    if (op.op === "restart") {
      const revision = await this.#d.store.nextMirrorRevision(id, op.restartCount);
      const res = await kube.request("PATCH", this.#mirrorPath(name), {
        body: { spec: { restartCount: op.restartCount, revision } },
      });
      if (res.status >= 300 && res.status !== 404) throw new Error(`restarting ${name} on ${clusterId}: ${res.status}`);
      // Only once written (or the mirror is gone and is written again with it): a failed write left
      // as applied would drop the old pod's reports and never retry.
      this.#mirrorStates.set(id, { revision, restarts: op.restartCount });
      if (res.status === 404) {
        this.#mirrors.set(id, { cluster: clusterId, state: "absent" });
        return;
      }
      this.counts.mirrorUpdates++;
      return;
    }
    // delete
    // A stray's cluster reports the mirror there: that stands against a cached "absent".
    if (!stray && known?.cluster === clusterId && known.state === "absent") return;
    const revision = this.#mirrorStates.get(id)?.revision;
    const res = await kube.request("DELETE", this.#mirrorPath(name), {
      body: { apiVersion: "v1", kind: "DeleteOptions", propagationPolicy: op.propagation },
    });
    // A placement meanwhile (back on this cluster) took a new revision for a new mirror: this answer is
    // about the old one and must not stand for it (read as present, the new one would never be written).
    const replaced = this.#mirrorStates.get(id)?.revision !== revision;
    if (res.status === 404) {
      if (stray) {
        this.#straysGone.set(id, (this.#straysGone.get(id) ?? new Map()).set(clusterId, strayAt));
        this.schedulePlacement();
        return;
      }
      if (!replaced) this.#mirrors.set(id, { cluster: clusterId, state: "absent" });
      this.#queue.add(keyOf(s as KubeObject));
      return;
    }
    if (res.status >= 300 && res.status !== 409)
      throw new Error(`deleting the mirror of ${name} on ${clusterId}: ${res.status}`);
    if (stray || known?.state !== "deleting") this.counts.mirrorDeletes++;
    if (!replaced && !stray) this.#mirrors.set(id, { cluster: clusterId, state: "deleting" });
  }

  // --- placement ----------------------------------------------------------------------------------------

  /** Runs a placement pass soon; passes never overlap, and a request during one runs another after it. */
  schedulePlacement(): void {
    if (this.#stopped || !this.#started) return;
    if (this.#placing) {
      this.#placeAgain = true;
      return;
    }
    if (this.#placeTimer) return;
    this.#placeTimer = setTimeout(() => {
      this.#placeTimer = undefined;
      this.#placing = this.#place()
        .catch((err: unknown) => {
          this.#log.warn({ err: String(err) }, "placement pass failed; trying again in 1 s");
          clearTimeout(this.#placeRetry);
          this.#placeRetry = setTimeout(() => this.schedulePlacement(), 1_000);
          this.#placeRetry.unref?.();
        })
        .finally(() => {
          this.#placing = undefined;
          if (this.#placeAgain) {
            this.#placeAgain = false;
            this.schedulePlacement();
          }
        });
    }, 10);
  }

  async #place(): Promise<void> {
    if (!this.sessions.synced) return;
    this.counts.placementPasses++;
    const now = this.#now();
    const requests: PlacementRequest[] = [];
    const holdings: Holding[] = [];
    const waitingOnCatalog: Session[] = [];
    const bySession = new Map<string, Session>();
    for (const [key, s] of this.sessions.store) {
      const phase = phaseOf(s);
      // A stray mirror holds its GPUs until it is gone, as a Pausing session's does.
      const strays = this.#strays(s, sessionIdOf(s.metadata.name as string));
      const strayGpus = strays.length > 0 ? this.#gpuCountOf(s) : undefined;
      if (s.status?.gpuModel && strayGpus)
        for (const r of strays)
          holdings.push({ clusterId: r.clusterId, gpuModel: s.status.gpuModel, gpuCount: strayGpus });
      if (s.status?.cluster && HOLDING_PHASES.includes(phase)) {
        const gpuCount = this.#gpuCountOf(s);
        if (s.status.gpuModel && gpuCount)
          holdings.push({ clusterId: s.status.cluster, gpuModel: s.status.gpuModel, gpuCount });
        continue;
      }
      const wants =
        s.spec.desiredState === "Running" && (phase === "Pending" || phase === "Queued" || phase === "Paused");
      if (!wants) continue;
      const offering = this.#offerings.store.get(s.spec.offering);
      const gpuCount = this.#gpuCountOf(s);
      if (!offering || !gpuCount) {
        waitingOnCatalog.push(s);
        continue;
      }
      const avoid = this.#avoid.get(key);
      if (avoid && avoid.until < Date.now()) this.#avoid.delete(key);
      bySession.set(key, s);
      requests.push({
        key,
        gpuModel: offering.spec.gpuModel,
        gpuCount,
        priority: s.spec.priority,
        since: queueSince(s, now),
        ...(s.spec.clusterPin ? { clusterPin: s.spec.clusterPin } : {}),
        volumes: s.spec.volumes.map((v) => {
          const bound = this.#volumes.store.get(`${s.metadata.namespace}/${v.volume}`)?.status?.boundCluster;
          return { name: v.volume, ...(bound ? { boundCluster: bound } : {}) };
        }),
        ...(avoid && avoid.until >= Date.now() ? { avoidClusters: [avoid.cluster] } : {}),
      });
    }
    if (requests.length === 0 && waitingOnCatalog.length === 0) return;

    const clusters = [...this.#clusterRecords.values()]
      .filter((c) => c.registered && this.#clusterCr(c.id))
      .map((c) => ({ clusterId: c.id, placeable: this.#reporting(c) }));
    const capacity = computeCapacity(clusters, this.#inventory, holdings);
    const plan = planPlacement({
      requests,
      clusters: capacity,
      policy: this.#o.policy,
      constraints: this.#o.constraints,
    });

    // The revisions of the mirrors these placements dispatch, taken in one round trip for the whole
    // pass. If that fails, the pass writes nothing and is tried again; a revision whose placement is
    // not written is never used (revisions only need to grow, not to be dense).
    const idOf = (key: string) => sessionIdOf(key.split("/")[1] ?? "");
    const revisions =
      plan.placed.length > 0
        ? await this.#d.store.nextMirrorRevisions(plan.placed.map((p) => idOf(p.key)))
        : new Map<string, number>();
    this.counts.revisionBatches += plan.placed.length > 0 ? 1 : 0;

    const jobs: (() => Promise<void>)[] = [];
    const modelOf = new Map(requests.map((r) => [r.key, r.gpuModel]));
    for (const p of plan.placed) {
      const s = bySession.get(p.key) as Session;
      const gpuModel = modelOf.get(p.key) as string;
      const id = idOf(p.key);
      const revision = revisions.get(id);
      jobs.push(async () => {
        const { status, events } = placedStatus(s, p, gpuModel, this.#now());
        // A fresh placement: what was known of an earlier mirror is stale, and its mirror is written at
        // the revision just taken. Both before the write, because the write's own watch event may start
        // the reconcile that dispatches at once.
        this.#mirrors.delete(id);
        // Reports are taken from that revision on: the earlier mirror's (its Terminated, when a session is
        // placed again on the same cluster after a lost node) would otherwise read as this mirror lost.
        const before = this.#mirrorStates.get(id);
        if (revision !== undefined) {
          this.#reserved.set(id, revision);
          this.#mirrorStates.set(id, { revision, restarts: before?.restarts ?? 0 });
        }
        let written: Session | undefined;
        try {
          written = await this.#writeStatus(s, status, events);
        } finally {
          if (!written && this.#reserved.get(id) === revision) {
            this.#reserved.delete(id);
            if (before) this.#mirrorStates.set(id, before);
            else this.#mirrorStates.delete(id);
          }
        }
        if (!written) return; // changed meanwhile: the next pass sees it afresh
        this.counts.placements++;
        // Dispatch goes through the session's own reconcile (Starting, no mirror yet → write it), so
        // that one key is never worked on twice at once.
        this.#queue.add(p.key);
      });
    }
    for (const w of plan.waiting) {
      const s = bySession.get(w.key) as Session;
      const { status, events } = waitingStatus(s, w, now, queueSince(s, now));
      if (status) jobs.push(async () => void (await this.#writeStatus(s, status, events)));
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
      if (status) jobs.push(async () => void (await this.#writeStatus(s, status, events)));
    }
    let failed = 0;
    await runLimited(jobs, this.#o.concurrency, (err) => {
      failed++;
      this.#log.warn({ err: String(err) }, "placement write failed");
    });
    // Not a conflict (those see fresh data on the next pass, which their own change brings): a failed
    // write changed nothing, so nothing would bring that pass. The retry does.
    if (failed > 0) throw new Error(`${failed} placement write(s) failed`);
  }

  #gpuCountOf(s: Session): number | undefined {
    if (s.spec.gpuCount !== undefined) return s.spec.gpuCount; // fixed at creation
    const offering = this.#offerings.store.get(s.spec.offering);
    const preset = this.#presets.store.get(s.spec.preset);
    if (!offering) return undefined;
    return preset && preset.spec.gpuCount > 0 ? preset.spec.gpuCount : offering.spec.gpuCount;
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

/** Two reports that say the same (an operator's heartbeat re-sends every state with a new time). */
function sameReport(a: StoredReport, b: StoredReport): boolean {
  return (
    a.phase === b.phase &&
    a.reason === b.reason &&
    a.message === b.message &&
    a.node === b.node &&
    a.revision === b.revision &&
    JSON.stringify(a.gpuDevices ?? null) === JSON.stringify(b.gpuDevices ?? null)
  );
}

/** Not a failure: a precondition that time resolves (requeue after `ms`, no backoff). */
class RetryAfter extends Error {
  readonly ms: number;
  constructor(ms: number, message: string) {
    super(message);
    this.ms = ms;
  }
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

export type { StatusReport };
