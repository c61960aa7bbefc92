// What the session controller observes: the management cluster's Sessions, Clusters and catalog (six
// informers), and from Postgres the registered clusters with their operators' last call, the node
// inventory and the operators' newest report of each session. The parts read the world here; nothing
// here writes.
import {
  type Cluster,
  ClusterKind,
  type Image,
  ImageKind,
  type InterimStatus,
  type KindPath,
  type Offering,
  OfferingKind,
  type Pool,
  PoolKind,
  type ResourcePreset,
  ResourcePresetKind,
  resourcePath,
  type Session,
  SessionKind,
  sessionIdOf,
  type Volume,
  VolumeKind,
  withInterim,
} from "@berth/crds";
import type { Logger } from "pino";
import type { KubeApi } from "../kube/client.ts";
import { Informer, type InformerEvent, type KubeObject } from "../kube/informer.ts";
import type { InventoryNodeView } from "../placement/capacity.ts";
import type { NodePoolRef } from "../placement/types.ts";
import { HOLDING_PHASES, phaseOf } from "./lifecycle.ts";
import type { SessionMemory } from "./memory.ts";
import type { ClusterRecord, SessionStore, StoredReport } from "./store.ts";

/** The interim status each effective view was made with (what a status write checks it still stands on). */
const appliedInterim = new WeakMap<Session, InterimStatus>();

/** The interim status `s` shows (undefined: the resource as it is). */
export function interimOf(s: Session): InterimStatus | undefined {
  return appliedInterim.get(s);
}

export interface ObservedHandlers {
  session(e: InformerEvent<Session & KubeObject>): void;
  /** A Cluster, Offering or Volume changed: placement may decide otherwise. */
  placementInput(): void;
}

export class Observed {
  readonly sessions: Informer<Session & KubeObject>;
  readonly clusters: Informer<Cluster & KubeObject>;
  readonly offerings: Informer<Offering & KubeObject>;
  readonly presets: Informer<ResourcePreset & KubeObject>;
  readonly images: Informer<Image & KubeObject>;
  readonly volumes: Informer<Volume & KubeObject>;
  /** Storage pools: a pool shared with `selected` clusters keeps its volumes' sessions on them. */
  readonly pools: Informer<Pool & KubeObject>;
  /** Registered clusters and their operators' last call (Postgres), by cluster id. */
  clusterRecords = new Map<string, ClusterRecord>();
  inventory: InventoryNodeView[] = [];
  /** Node pools and their grants, read with the inventory. */
  nodePools: NodePoolRef[] = [];
  /** The inventory's nodes by `cluster/node`, and what it looked like (a refresh that changed nothing places nothing). */
  nodes = new Map<string, InventoryNodeView>();
  #inventorySignature = "";
  /** The newest report of each session from each cluster: session id → per cluster. */
  readonly reports = new Map<string, StoredReport[]>();
  readonly #store: SessionStore;
  readonly #memory: SessionMemory;
  readonly #now: () => Date;
  readonly #reportGraceMs: number;
  /** Whether each cluster was reporting at the last refresh. */
  #wasReporting = new Map<string, boolean>();

  constructor(o: {
    kube: KubeApi;
    store: SessionStore;
    memory: SessionMemory;
    log: Logger;
    now: () => Date;
    reportGraceMs: number;
    on: ObservedHandlers;
  }) {
    this.#store = o.store;
    this.#memory = o.memory;
    this.#now = o.now;
    this.#reportGraceMs = o.reportGraceMs;
    const onError = (what: string) => (err: unknown, msg: string) =>
      o.log.warn({ err: String(err), informer: what }, msg);
    const parse =
      <T>(schema: { parse(x: unknown): T }) =>
      (x: KubeObject) =>
        schema.parse(x) as T & KubeObject;
    const informer = <T>(
      kind: KindPath & { schema: { parse(x: unknown): T } },
      what: string,
      onEvent: (e: InformerEvent<T & KubeObject>) => void,
    ) =>
      new Informer<T & KubeObject>({
        kube: o.kube,
        path: resourcePath(kind),
        parse: parse(kind.schema),
        onEvent,
        onError: onError(what),
      });
    this.sessions = informer(SessionKind, "sessions", (e) => o.on.session(e));
    this.clusters = informer(ClusterKind, "clusters", () => o.on.placementInput());
    this.offerings = informer(OfferingKind, "offerings", () => o.on.placementInput());
    this.presets = informer(ResourcePresetKind, "presets", () => {});
    this.images = informer(ImageKind, "images", () => {});
    this.volumes = informer(VolumeKind, "volumes", () => o.on.placementInput());
    this.pools = informer(PoolKind, "pools", () => o.on.placementInput());
  }

  #informers() {
    return [this.clusters, this.offerings, this.presets, this.images, this.volumes, this.pools, this.sessions];
  }

  /** Starts the informers (sessions last) and resolves once each has listed. */
  async sync(timeoutMs: number): Promise<void> {
    const informers = this.#informers();
    for (const i of informers) i.start();
    await Promise.all(informers.map((i) => i.waitForSync(timeoutMs)));
  }

  async stop(): Promise<void> {
    await Promise.all(this.#informers().map((i) => i.stop()));
  }

  /**
   * The session as the worker stands on it: the resource as the informer has it, with the status kept
   * off it (an interim phase, recorded in Postgres) while that still follows the resource's status.
   */
  effective(s: Session & KubeObject): Session & KubeObject {
    const interim = this.#memory.interim.get(sessionIdOf(s.metadata.name as string));
    const e = withInterim(s, interim) as Session & KubeObject;
    if (e !== s && interim) appliedInterim.set(e, interim);
    return e;
  }

  /** The session of this key as it stands (effective), if the informer has it. */
  session(key: string): (Session & KubeObject) | undefined {
    const s = this.sessions.store.get(key);
    return s && this.effective(s);
  }

  /** Every session as it stands (effective), with its key. */
  *sessionsNow(): Generator<[string, Session & KubeObject]> {
    for (const [key, s] of this.sessions.store) yield [key, this.effective(s)];
  }

  /** The keys of the Sessions (as the informer has them now) whose ids are among these. */
  keysOf(ids: ReadonlySet<string>): string[] {
    const keys: string[] = [];
    for (const [key, s] of this.sessions.store) if (ids.has(sessionIdOf(s.metadata.name as string))) keys.push(key);
    return keys;
  }

  /**
   * Keeps a report; false when it says what the one kept already said (an operator's heartbeat), or when
   * it is older than the one kept: reads of the reports overlap (notifications, the resync), and one that
   * began first may answer last. Postgres keeps the newest by `at` too, so an older one is a stale read
   * (taken, it would move a Running session back to Starting).
   */
  putReport(r: StoredReport): boolean {
    const before = this.reports.get(r.sessionId) ?? [];
    const same = before.find((x) => x.clusterId === r.clusterId);
    if (same && Date.parse(r.at) < Date.parse(same.at)) return false;
    const list = before.filter((x) => x !== same);
    list.push(r);
    this.reports.set(r.sessionId, list);
    const since = this.#memory.unschedulableSince;
    if (r.reason === "Unschedulable") {
      if (!since.has(r.sessionId)) since.set(r.sessionId, this.#now());
    } else since.delete(r.sessionId);
    return !same || !sameReport(same, r);
  }

  /** Re-reads the clusters; returns the ids of those that started or stopped reporting, or went. */
  async refreshClusters(): Promise<Set<string>> {
    const before = this.clusterRecords;
    const next = new Map((await this.#store.clusters()).map((c) => [c.id, c]));
    this.clusterRecords = next;
    const changed = new Set<string>();
    // Against what the last refresh found, not the old record read now: a silent cluster's record does
    // not change, only the clock moves past its grace.
    const wasReporting = this.#wasReporting;
    this.#wasReporting = new Map([...next].map(([id, c]) => [id, this.reporting(c)]));
    for (const [id, now] of this.#wasReporting) if (now !== (wasReporting.get(id) ?? false)) changed.add(id);
    for (const id of before.keys()) if (!next.has(id)) changed.add(id);
    return changed;
  }

  /** Re-reads the inventory; false when it is what it was (and `always` is not asked). */
  async refreshInventory(always = false): Promise<boolean> {
    const [inventory, nodePools] = await Promise.all([this.#store.inventory(), this.#store.nodePools?.() ?? []]);
    const signature = JSON.stringify([inventory, nodePools]);
    if (!always && signature === this.#inventorySignature) return false;
    this.inventory = inventory;
    this.nodePools = nodePools;
    this.#inventorySignature = signature;
    this.nodes = new Map(inventory.map((n) => [`${n.clusterId}/${n.name}`, n]));
    return true;
  }

  reporting(c: ClusterRecord | undefined): boolean {
    return !!c?.lastReportAt && this.#now().getTime() - c.lastReportAt.getTime() < this.#reportGraceMs;
  }

  nodeLost(s: Session): boolean {
    const cluster = s.status?.cluster;
    const assigned = s.status?.gpuAssignment?.node;
    const node = s.status?.node ?? assigned;
    if (!cluster || !node) return false;
    // Only when the cluster reports: a silent cluster makes its sessions Unknown, not lost.
    if (!this.reporting(this.clusterRecords.get(cluster))) return false;
    const n = this.nodes.get(`${cluster}/${node}`);
    if (!n?.ready) return true;
    // A pod pinned to its cards cannot move to another node by itself: on a cordoned (drained) node whose
    // pod is not running, the session is placed again, as whole GPUs are by the scheduler.
    if (assigned && !n.schedulable) {
      const id = sessionIdOf(s.metadata.name as string);
      const report = (this.reports.get(id) ?? []).find((r) => r.clusterId === cluster);
      return report?.phase !== "Running" && report?.phase !== "Restarting";
    }
    return false;
  }

  clusterResource(id: string): Cluster | undefined {
    for (const c of this.clusters.store.values()) if (c.spec.id === id) return c;
    return undefined;
  }

  gpuCountOf(s: Session): number | undefined {
    if (s.spec.gpuCount !== undefined) return s.spec.gpuCount; // fixed at creation
    const offering = this.offerings.store.get(s.spec.offering);
    const preset = this.presets.store.get(s.spec.preset);
    if (!offering) return undefined;
    return preset && preset.spec.gpuCount > 0 ? preset.spec.gpuCount : offering.spec.gpuCount;
  }

  /**
   * Registered clusters whose newest report on the session says its mirror is still there (not Terminated,
   * no 404 since) while the session wants no pod there: placed elsewhere, or in a phase without one
   * (Paused, Failed, Terminated, waiting). Pausing and Terminating hold it: their plan deletes it.
   */
  strays(s: Session, id: string): StoredReport[] {
    const holds = HOLDING_PHASES.includes(phaseOf(s));
    const gone = this.#memory.straysGone.get(id);
    return (this.reports.get(id) ?? []).filter(
      (r) =>
        r.phase !== "Terminated" &&
        gone?.get(r.clusterId) !== r.at &&
        !(holds && s.status?.cluster === r.clusterId) &&
        this.clusterRecords.get(r.clusterId)?.registered,
    );
  }
}

/** Two reports that say the same (an operator's heartbeat re-sends every state with a new time). */
export function sameReport(a: StoredReport, b: StoredReport): boolean {
  return (
    a.phase === b.phase &&
    a.reason === b.reason &&
    a.message === b.message &&
    a.node === b.node &&
    a.revision === b.revision &&
    JSON.stringify(a.gpuDevices ?? null) === JSON.stringify(b.gpuDevices ?? null)
  );
}
