// A fleet in memory for the session controller's tests: an apiserver in memory for the management
// cluster and one for a GPU cluster, a store in memory, and the controller over them. `stopFleets` in an
// afterEach stops what a test started.
import {
  type InterimStatus,
  resourcePath,
  type Session,
  SessionMirrorKind,
  sessionIdOf,
  sessionPath,
  withInterim,
} from "@berth/crds";
import { examples } from "@berth/crds/testing";
import pino from "pino";
import type { InventoryNodeView } from "../placement/capacity.ts";
import { SessionController, type SessionControllerOptions } from "./controller.ts";
import { MemoryKube } from "./memory-kube.test-support.ts";
import { aSession } from "./session-builder.test-support.ts";
import type { ClusterRecord, MirrorState, SessionStore, StoredReport } from "./store.ts";

export const CLUSTER = "clu_a1";
export const H100 = "NVIDIA-H100-80GB-HBM3";

/** Mirror revisions per session as Postgres keeps them, and how they were taken. */
export class MemoryStore implements SessionStore {
  readonly revisions = new Map<string, number>();
  /** The ids of each batch taken, and of each single take. */
  readonly batches: string[][] = [];
  readonly singles: string[] = [];
  /** Batches to refuse before serving them. */
  failBatches = 0;
  readonly transitions: [string, string | undefined, string | undefined][] = [];
  /** Restart counts recorded with a revision, and the operators' newest reports. */
  readonly restarts = new Map<string, number>();
  reps: StoredReport[] = [];
  nodes: InventoryNodeView[];
  /** The cluster's operator has not called for long. */
  silent = false;
  /** The cluster's last report, when it is not "just now" (a cluster that stopped calling at that time). */
  lastReportAt?: Date;
  /** The administrators' placement policy, as the system settings give it. */
  placementPolicy?: () => Promise<"binpack" | "spread" | undefined>;
  #handlers: { reports(ids: string[]): void; inventory(): void } | undefined;
  constructor(gpus: number) {
    this.nodes = [
      {
        clusterId: CLUSTER,
        name: "gpu-a-0",
        gpuModel: H100,
        gpuAllocatable: gpus,
        gpuInUse: 0,
        schedulable: true,
        ready: true,
      },
    ];
  }

  async clusters(): Promise<ClusterRecord[]> {
    return [
      { id: CLUSTER, registered: true, lastReportAt: this.silent ? new Date(0) : (this.lastReportAt ?? new Date()) },
    ];
  }
  async inventory(): Promise<InventoryNodeView[]> {
    return structuredClone(this.nodes);
  }
  /** The ids of each reports read, as it is answered (undefined: all). */
  readonly reportReads: (readonly string[] | undefined)[] = [];
  async reports(ids?: readonly string[]): Promise<StoredReport[]> {
    this.reportReads.push(ids ? [...ids] : undefined);
    return structuredClone(this.reps.filter((r) => !ids || ids.includes(r.sessionId)));
  }
  /** An operator's report arrives (kept as the newest of its session and cluster, then notified). */
  report(r: Omit<StoredReport, "clusterId" | "at"> & { node?: string }): void {
    this.reps = this.reps.filter((x) => x.sessionId !== r.sessionId);
    this.reps.push({ clusterId: CLUSTER, at: new Date().toISOString(), node: "gpu-a-0", ...r });
    this.#handlers?.reports([r.sessionId]);
  }
  inventoryChanged(): void {
    this.#handlers?.inventory();
  }
  async mirrorStates(ids: readonly string[]): Promise<Map<string, MirrorState>> {
    return new Map(
      ids.flatMap((id) =>
        this.revisions.has(id)
          ? [[id, { revision: this.revisions.get(id) as number, restarts: this.restarts.get(id) ?? 0 }]]
          : [],
      ),
    );
  }
  #take(id: string): number {
    const r = (this.revisions.get(id) ?? 0) + 1;
    this.revisions.set(id, r);
    return r;
  }
  async nextMirrorRevision(id: string, restarts?: number): Promise<number> {
    this.singles.push(id);
    if (restarts !== undefined) this.restarts.set(id, restarts);
    return this.#take(id);
  }
  async nextMirrorRevisions(ids: readonly string[]): Promise<Map<string, number>> {
    if (this.failBatches > 0) {
      this.failBatches--;
      throw new Error("the database is gone for a moment");
    }
    this.batches.push([...ids]);
    return new Map(ids.map((id) => [id, this.#take(id)]));
  }
  /** Transitions wait for this before they are recorded (a slow database). */
  gate: Promise<void> = Promise.resolve();
  /** Transitions to refuse. */
  failRecords = 0;
  /** Interim statuses as the history rows hold them, and the fence's term (a new leader takes the next). */
  readonly interims = new Map<string, InterimStatus>();
  term = 0;
  /** Refuses the records this says (by session name and the phase recorded). */
  refuseRecord?: (name: string, phase: string | undefined) => boolean;
  /** Records waiting at the gate now. */
  held = 0;
  async recordTransition(before: Session, after: Session, interim?: InterimStatus): Promise<void> {
    this.held++;
    await this.gate.finally(() => this.held--);
    if (this.failRecords > 0) {
      this.failRecords--;
      throw new Error("the history row could not be written");
    }
    if (this.refuseRecord?.(after.metadata.name as string, after.status?.phase))
      throw new Error("the history row could not be written");
    this.transitions.push([after.metadata.name as string, before.status?.phase, after.status?.phase]);
    const id = sessionIdOf(after.metadata.name as string);
    this.phases.set(id, after.status?.phase ?? "Pending");
    if (interim) this.interims.set(id, interim);
    else this.interims.delete(id);
  }
  /** The phase each history row holds, as recorded (a session never recorded has none here). */
  readonly phases = new Map<string, string>();
  async recordedPhases(ids: readonly string[]): Promise<Map<string, string>> {
    return new Map(ids.flatMap((id) => (this.phases.has(id) ? [[id, this.phases.get(id) as string]] : [])));
  }
  async fence(): Promise<void> {
    this.term++;
  }
  async interimStatuses(): Promise<Map<string, InterimStatus>> {
    return new Map(this.interims);
  }
  async recordDeleted(): Promise<void> {}
  /** History rows as the API wrote them (only what the sweep of unmade creates reads). */
  rows: { id: string; namespace: string; name: string; createdAt: Date; phase: string }[] = [];
  async pendingRows(since: Date, before: Date) {
    return this.rows
      .filter((r) => r.phase === "Pending" && r.createdAt >= since && r.createdAt < before)
      .map(({ id, namespace, name }) => ({ id, namespace, name }));
  }
  async failUnmadeCreate(id: string): Promise<boolean> {
    const r = this.rows.find((x) => x.id === id && x.phase === "Pending");
    if (r) r.phase = "Failed";
    return !!r;
  }
  async listen(handlers: { reports(ids: string[]): void; inventory(): void }): Promise<() => Promise<void>> {
    this.#handlers = handlers;
    return async () => {
      if (this.#handlers === handlers) this.#handlers = undefined;
    };
  }
  /** A controller is subscribed to reports and inventory changes. */
  get listening(): boolean {
    return this.#handlers !== undefined;
  }
  async purgeEvents(): Promise<number> {
    return 0;
  }
}

const started: SessionController[] = [];

/** Stops every controller the fleets of this test made. */
export async function stopFleets(): Promise<void> {
  for (const c of started.splice(0)) await c.stop();
}

export function aFleet(sessions: number, gpus = sessions, options: Partial<SessionControllerOptions> = {}) {
  const mgmt = new MemoryKube();
  const gpu = new MemoryKube();
  const cluster = examples.Cluster();
  mgmt.put("clusters", cluster as never);
  mgmt.put("offerings", examples.Offering() as never);
  mgmt.put("resourcepresets", examples.ResourcePreset() as never);
  mgmt.put("images", examples.Image() as never);
  const names = Array.from({ length: sessions }, (_, i) => `ses-${String(i).padStart(20, "0")}`);
  names.forEach((name, i) => {
    const s = aSession(name).build();
    s.metadata.annotations = { "berth.dev/created-at": new Date(Date.UTC(2026, 10, 22, 6, 0, i)).toISOString() };
    delete s.status;
    mgmt.put("sessions", s as never);
  });
  const store = new MemoryStore(gpus);
  const controller = aController({ mgmt, gpu, store }, options);
  return { mgmt, gpu, store, controller, names, ids: names.map((n) => n.replace("-", "_")) };
}

/** A controller over a fleet: its first, or the next leader after `f.controller` stopped. */
export function aController(
  f: { mgmt: MemoryKube; gpu: MemoryKube; store: MemoryStore },
  options: Partial<SessionControllerOptions> = {},
): SessionController {
  const controller = new SessionController({
    kube: f.mgmt,
    store: f.store,
    clusterClient: async () => f.gpu,
    log: pino({ level: "silent" }),
    options: { pollMs: 3_600_000, resyncMs: 3_600_000, concurrency: 8, ...options },
  });
  started.push(controller);
  return controller;
}

/** How often each session was written to a phase, from the apiserver's own log of successful writes. */
export function statusWrites(mgmt: MemoryKube, phase: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of mgmt.log) {
    if (r.method !== "PUT" || r.status !== 200 || !r.path.endsWith("/status")) continue;
    if ((r.body as Session).status?.phase !== phase) continue;
    const name = r.path.split("/").at(-2) as string;
    out.set(name, (out.get(name) ?? 0) + 1);
  }
  return out;
}

/** How often each session's status was recorded in a phase (written to its resource or kept off it). */
export function records(store: MemoryStore, phase: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, , after] of store.transitions) if (after === phase) out.set(name, (out.get(name) ?? 0) + 1);
  return out;
}

/** The sessions as they stand: each resource with the interim status its history row holds. */
export function standing(f: { mgmt: MemoryKube; store: MemoryStore }): Session[] {
  return (f.mgmt.list("sessions") as unknown as Session[]).map((s) =>
    withInterim(s, f.store.interims.get(sessionIdOf(s.metadata.name as string))),
  );
}

/** How often each mirror was written (applied), from the GPU cluster's log. */
export function mirrorCreates(gpu: MemoryKube): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of gpu.log) {
    if (!r.apply || !r.path.includes("/sessionmirrors/")) continue;
    const name = (r.body as { metadata: { name: string } }).metadata.name;
    out.set(name, (out.get(name) ?? 0) + 1);
  }
  return out;
}

export async function until(what: string, pred: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const statusOf = (mgmt: MemoryKube) => (mgmt.list("sessions")[0] as unknown as Session).status;
export const mirrorOf = (gpu: MemoryKube) =>
  gpu.list("sessionmirrors")[0]?.spec as { revision: number; restartCount: number } | undefined;

/** One session placed on CLUSTER before (revision 1), its mirror written by the worker, reported Running. */
export async function aRunningSession(gpus = 1, options: Partial<SessionControllerOptions> = {}) {
  const f = aFleet(1, gpus, options);
  const name = f.names[0] as string;
  const id = f.ids[0] as string;
  const s = f.mgmt.list("sessions")[0] as unknown as Session;
  s.status = { phase: "Starting", cluster: CLUSTER, gpuModel: H100 };
  f.mgmt.put("sessions", s as never);
  f.store.revisions.set(id, 1);
  await f.controller.start();
  await until("its mirror", () => mirrorOf(f.gpu) !== undefined);
  f.store.report({ sessionId: id, phase: "Running", revision: mirrorOf(f.gpu)?.revision as number });
  await until("Running", () => statusOf(f.mgmt)?.phase === "Running");
  await f.controller.idle();
  return { ...f, name, id };
}

export const MIRRORS = resourcePath(SessionMirrorKind, { namespace: "berth-sessions" });
export const mirrorDeletes = (gpu: MemoryKube) =>
  gpu.log.filter((r) => r.method === "DELETE" && r.path.startsWith(MIRRORS)).map((r) => r.status);
export const setDesired = (f: { mgmt: MemoryKube; name: string }, desiredState: string) =>
  f.mgmt.request("PATCH", sessionPath("org-acme", f.name), {
    body: { spec: { desiredState } },
  });
