// The session controller in-process against an apiserver in memory (management and GPU cluster) and a
// store in memory: what a placement pass writes when it places many sessions at once, and when some of
// its writes fail.
import type { Session } from "@berth/crds";
import { examples } from "@berth/crds/testing";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { InventoryNodeView } from "../placement/capacity.ts";
import { placementMatters, SessionController, type SessionControllerOptions } from "./controller.ts";
import { DEFAULT_TIMING } from "./lifecycle.ts";
import { MemoryKube } from "./memory-kube.test-support.ts";
import type { ClusterRecord, MirrorState, SessionStore, StoredReport } from "./store.ts";
import { aSession } from "./testing.ts";

const CLUSTER = "clu_a1";
const H100 = "NVIDIA-H100-80GB-HBM3";

/** Mirror revisions per session as Postgres keeps them, and how they were taken. */
class MemoryStore implements SessionStore {
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
    return [{ id: CLUSTER, registered: true, lastReportAt: this.silent ? new Date(0) : new Date() }];
  }
  async inventory(): Promise<InventoryNodeView[]> {
    return structuredClone(this.nodes);
  }
  async reports(ids?: readonly string[]): Promise<StoredReport[]> {
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
  async recordTransition(before: Session, after: Session): Promise<void> {
    await this.gate;
    if (this.failRecords > 0) {
      this.failRecords--;
      throw new Error("the history row could not be written");
    }
    this.transitions.push([after.metadata.name as string, before.status?.phase, after.status?.phase]);
  }
  async recordDeleted(): Promise<void> {}
  async listen(handlers: { reports(ids: string[]): void; inventory(): void }): Promise<() => Promise<void>> {
    this.#handlers = handlers;
    return async () => {};
  }
  async purgeEvents(): Promise<number> {
    return 0;
  }
}

function aFleet(sessions: number, gpus = sessions, options: Partial<SessionControllerOptions> = {}) {
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
  const controller = new SessionController({
    kube: mgmt,
    store,
    clusterClient: async () => gpu,
    log: pino({ level: "silent" }),
    options: { pollMs: 3_600_000, resyncMs: 3_600_000, concurrency: 8, ...options },
  });
  return { mgmt, gpu, store, controller, names, ids: names.map((n) => n.replace("-", "_")) };
}

/** How often each session was written to a phase, from the apiserver's own log of successful writes. */
function statusWrites(mgmt: MemoryKube, phase: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of mgmt.log) {
    if (r.method !== "PUT" || r.status !== 200 || !r.path.endsWith("/status")) continue;
    if ((r.body as Session).status?.phase !== phase) continue;
    const name = r.path.split("/").at(-2) as string;
    out.set(name, (out.get(name) ?? 0) + 1);
  }
  return out;
}

function mirrorCreates(gpu: MemoryKube): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of gpu.log) {
    if (r.method !== "POST" || !r.path.endsWith("/sessionmirrors")) continue;
    const name = (r.body as { metadata: { name: string } }).metadata.name;
    out.set(name, (out.get(name) ?? 0) + 1);
  }
  return out;
}

async function until(what: string, pred: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

let running: SessionController | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

describe("a placement pass over many waiting sessions", () => {
  it("places each once and dispatches each mirror at a revision taken in one batch for the pass", async () => {
    const f = aFleet(12);
    // One of them ran before (paused, resumed): its next mirror must outrank the ones it had.
    f.store.revisions.set(f.ids[3] as string, 5);
    running = f.controller;
    await f.controller.start();
    await until("12 mirrors", () => f.gpu.list("sessionmirrors").length === 12);
    await f.controller.idle();

    expect(f.store.batches.map((b) => [...b].sort())).toEqual([[...f.ids].sort()]);
    expect(f.store.singles).toEqual([]);
    for (const m of f.gpu.list("sessionmirrors")) {
      const id = (m.spec as { sessionId: string }).sessionId;
      expect((m.spec as { revision: number }).revision).toBe(id === f.ids[3] ? 6 : 1);
      expect(f.store.revisions.get(id)).toBe((m.spec as { revision: number }).revision);
    }
    expect([...statusWrites(f.mgmt, "Starting").values()]).toEqual(Array(12).fill(1));
    expect([...mirrorCreates(f.gpu).values()]).toEqual(Array(12).fill(1));
    for (const s of f.mgmt.list("sessions") as unknown as Session[])
      expect(s.status).toMatchObject({ phase: "Starting", cluster: CLUSTER, gpuModel: H100 });
  });

  it("places the rest once and nothing twice when the revision batch and some status writes fail", async () => {
    const f = aFleet(12);
    f.store.failBatches = 1;
    const refused = new Set(f.names.filter((_, i) => i % 3 === 1));
    f.mgmt.fail = (method, path) => {
      const name = path.split("/").at(-2) as string;
      if (method === "PUT" && path.endsWith("/status") && refused.delete(name)) return 500;
      return undefined;
    };
    running = f.controller;
    await f.controller.start();
    await until("12 mirrors", () => f.gpu.list("sessionmirrors").length === 12);
    await f.controller.idle();

    expect(refused.size).toBe(0);
    // Each placed once, each mirror written once, at the revision its (successful) placement took.
    expect([...statusWrites(f.mgmt, "Starting").values()]).toEqual(Array(12).fill(1));
    expect([...mirrorCreates(f.gpu).values()]).toEqual(Array(12).fill(1));
    expect(f.gpu.log.filter((r) => r.status === 409)).toEqual([]);
    expect(f.store.singles).toEqual([]);
    for (const m of f.gpu.list("sessionmirrors")) {
      const id = (m.spec as { sessionId: string }).sessionId;
      expect((m.spec as { revision: number }).revision).toBe(f.store.revisions.get(id));
    }
    // The four refused writes were placed by a later pass, whose batch took them a newer revision.
    expect(f.store.batches.length).toBeGreaterThanOrEqual(2);
    expect(f.controller.counts.placements).toBe(12);
  });

  it("leaves the sessions that do not fit queued, in order, without taking revisions for them", async () => {
    const f = aFleet(6, 4);
    running = f.controller;
    await f.controller.start();
    await until("4 mirrors", () => f.gpu.list("sessionmirrors").length === 4);
    await f.controller.idle();

    expect(f.store.batches.map((b) => [...b].sort())).toEqual([f.ids.slice(0, 4)]);
    const byName = new Map((f.mgmt.list("sessions") as unknown as Session[]).map((s) => [s.metadata.name, s]));
    expect(f.names.map((n) => byName.get(n)?.status?.phase)).toEqual([
      "Starting",
      "Starting",
      "Starting",
      "Starting",
      "Queued",
      "Queued",
    ]);
    expect(f.names.slice(4).map((n) => byName.get(n)?.status?.queue?.position)).toEqual([1, 2]);
  });
});

describe("which changes of a session start a placement pass", () => {
  const on = (phase: NonNullable<NonNullable<Session["status"]>["phase"]>) =>
    aSession().onCluster(CLUSTER).phase(phase).build();
  const waiting = (phase: NonNullable<NonNullable<Session["status"]>["phase"]>) => aSession().phase(phase).build();

  it.each([
    ["a move between two phases that hold GPUs on the same cluster", on("Starting"), on("Running"), false],
    ["a restart", on("Running"), on("Restarting"), false],
    ["a session that stays Queued (its position moved)", waiting("Queued"), waiting("Queued"), false],
    ["a placement", waiting("Pending"), on("Starting"), true],
    ["a pause that gave its GPU back", on("Pausing"), waiting("Paused"), true],
    ["an end", on("Terminating"), waiting("Terminated"), true],
    ["a session put back after a node was lost", on("Running"), waiting("Pending"), true],
    ["a session entering the queue", waiting("Pending"), waiting("Queued"), true],
  ])("%s", (_what, before, after, expected) => {
    expect(placementMatters(before, after)).toBe(expected);
  });

  it("a change of intent or priority, whatever the phase", () => {
    const raised = on("Running");
    raised.spec.priority = 5;
    expect(placementMatters(on("Running"), raised)).toBe(true);
    const paused = on("Running");
    paused.spec.desiredState = "Paused";
    expect(placementMatters(on("Running"), paused)).toBe(true);
  });
});

describe("dispatch after the history knows where the session is", () => {
  it("writes no mirror before the placement is recorded in the session's history", async () => {
    const f = aFleet(3);
    let open = () => {};
    f.store.gate = new Promise((r) => {
      open = r;
    });
    running = f.controller;
    try {
      await f.controller.start();
      await until("3 placements", () => [...statusWrites(f.mgmt, "Starting").values()].length === 3);
      await new Promise((r) => setTimeout(r, 200));
      expect(f.gpu.list("sessionmirrors")).toEqual([]);
    } finally {
      open();
    }
    await until("3 mirrors", () => f.gpu.list("sessionmirrors").length === 3);
    await f.controller.idle();
    expect(f.store.transitions.map(([, , to]) => to)).toEqual(["Starting", "Starting", "Starting"]);
  });

  it("records a placement again before its mirror when the first record failed", async () => {
    const f = aFleet(1);
    f.store.failRecords = 1;
    running = f.controller;
    await f.controller.start();
    await until("1 mirror", () => f.gpu.list("sessionmirrors").length === 1);
    await f.controller.idle();

    expect([...statusWrites(f.mgmt, "Starting").values()]).toEqual([1]);
    // Once, from the status it had before the placement.
    expect(f.store.transitions).toEqual([[f.names[0], undefined, "Starting"]]);
    expect([...mirrorCreates(f.gpu).values()]).toEqual([1]);
  });

  it("records a status change whose first record failed on the next reconcile", async () => {
    const f = await aRunningSession();
    const byName = () => f.store.transitions.filter(([n]) => n === f.name).map(([, from, to]) => `${from}->${to}`);
    const recorded = byName();
    f.store.failRecords = 1;
    f.store.report({
      sessionId: f.id,
      phase: "Starting",
      reason: "PodPending",
      revision: mirrorOf(f.gpu)?.revision as number,
    });
    await until("Starting", () => statusOf(f.mgmt)?.phase === "Starting");
    await until("the change recorded", () => byName().length > recorded.length, 5_000);
    expect(byName()).toEqual([...recorded, "Running->Starting"]);
  });
});

const statusOf = (mgmt: MemoryKube) => (mgmt.list("sessions")[0] as unknown as Session).status;
const mirrorOf = (gpu: MemoryKube) =>
  gpu.list("sessionmirrors")[0]?.spec as { revision: number; restartCount: number } | undefined;

/** One session placed on CLUSTER before (revision 1), its mirror written by the worker, reported Running. */
async function aRunningSession(gpus = 1, options: Partial<SessionControllerOptions> = {}) {
  const f = aFleet(1, gpus, options);
  const name = f.names[0] as string;
  const id = f.ids[0] as string;
  const s = f.mgmt.list("sessions")[0] as unknown as Session;
  s.status = { phase: "Starting", cluster: CLUSTER, gpuModel: H100 };
  f.mgmt.put("sessions", s as never);
  f.store.revisions.set(id, 1);
  running = f.controller;
  await f.controller.start();
  await until("its mirror", () => mirrorOf(f.gpu) !== undefined);
  f.store.report({ sessionId: id, phase: "Running", revision: mirrorOf(f.gpu)?.revision as number });
  await until("Running", () => statusOf(f.mgmt)?.phase === "Running");
  await f.controller.idle();
  return { ...f, name, id };
}

describe("a session's GPUs", () => {
  it("are the count fixed at its creation, not what its preset says after an administrator's change", async () => {
    const f = aFleet(1, 4);
    const s = f.mgmt.list("sessions")[0] as unknown as Session;
    s.spec.gpuCount = 1; // created on the one-GPU preset
    f.mgmt.put("sessions", s as never);
    const preset = examples.ResourcePreset();
    preset.spec.gpuCount = 2; // changed since
    f.mgmt.put("resourcepresets", preset as never);
    running = f.controller;
    await f.controller.start();
    await until("its mirror", () => mirrorOf(f.gpu) !== undefined);
    const mirror = f.gpu.list("sessionmirrors")[0]?.spec as { resources: { gpuCount: number } };
    expect(mirror.resources.gpuCount).toBe(1);
  });
});

describe("a running session's mirror", () => {
  it("is restarted when the first restart write to the mirror fails", async () => {
    const f = await aRunningSession();
    let refuse = 1;
    f.gpu.fail = (method, path) =>
      method === "PATCH" && path.includes("/sessionmirrors/") && refuse-- > 0 ? 500 : undefined;
    // The API bumps the annotation (MemoryKube's PATCH keeps metadata: put it, then PATCH for the watch).
    const s = f.mgmt.list("sessions")[0] as unknown as Session;
    s.metadata.annotations = { ...s.metadata.annotations, "berth.dev/restarts": "1" };
    f.mgmt.put("sessions", s as never);
    await f.mgmt.request("PATCH", `/apis/berth.dev/v1alpha1/namespaces/org-acme/sessions/${f.name}`, {
      body: { spec: { priority: s.spec.priority } },
    });
    await until("the restart written to the mirror", () => mirrorOf(f.gpu)?.restartCount === 1, 5_000);
    expect(statusOf(f.mgmt)?.phase).toBe("Restarting");
    // The new pod's report counts: the session runs again.
    f.store.report({ sessionId: f.id, phase: "Running", revision: mirrorOf(f.gpu)?.revision as number });
    await until("Running again", () => statusOf(f.mgmt)?.phase === "Running", 5_000);
    expect(mirrorOf(f.gpu)?.revision).toBe(f.store.revisions.get(f.id));
  });

  it("is written again when the operator reports it gone while the session runs", async () => {
    const f = await aRunningSession();
    const before = mirrorOf(f.gpu)?.revision as number;
    await f.gpu.request("DELETE", `/apis/berth.dev/v1alpha1/namespaces/berth-sessions/sessionmirrors/${f.name}`);
    f.store.report({ sessionId: f.id, phase: "Terminated", revision: before });
    await until("the mirror written again", () => mirrorOf(f.gpu) !== undefined, 5_000);
    expect(mirrorOf(f.gpu)?.revision).toBeGreaterThan(before);
    expect(statusOf(f.mgmt)?.phase).toBe("Starting");
  });

  it("is written again when the session is placed back on its cluster while the old one's delete is slow", async () => {
    const f = await aRunningSession();
    const before = mirrorOf(f.gpu)?.revision as number;
    const serve = f.gpu.request.bind(f.gpu);
    f.gpu.request = (async (method: string, path: string, opts?: object) => {
      if (method === "DELETE") await new Promise((r) => setTimeout(r, 300));
      return serve(method, path, opts);
    }) as typeof f.gpu.request;
    // Its node is lost; another node of the same cluster has room.
    f.store.nodes = [
      { ...(f.store.nodes[0] as InventoryNodeView), ready: false },
      { ...(f.store.nodes[0] as InventoryNodeView), name: "gpu-a-1" },
    ];
    f.store.inventoryChanged();
    await until("the mirror written again", () => (mirrorOf(f.gpu)?.revision ?? 0) > before, 5_000);
    await f.controller.idle();
    expect(mirrorOf(f.gpu)?.revision).toBe(f.store.revisions.get(f.id));
    expect(statusOf(f.mgmt)).toMatchObject({ phase: "Starting", cluster: CLUSTER });
  });

  it("is not placed straight back on the cluster where its pod found no node", async () => {
    const f = await aRunningSession(1, { timing: { ...DEFAULT_TIMING, unschedulableMs: 0 } });
    // A slow history write: the placement pass runs while the Pending write is being recorded.
    f.store.gate = new Promise((r) => setTimeout(r, 300));
    f.store.report({
      sessionId: f.id,
      phase: "Starting",
      reason: "Unschedulable",
      revision: mirrorOf(f.gpu)?.revision as number,
    });
    await until("placed again", () => statusOf(f.mgmt)?.phase !== "Running");
    await new Promise((r) => setTimeout(r, 400));
    await f.controller.idle();
    expect(statusWrites(f.mgmt, "Starting")).toEqual(new Map());
    expect(statusOf(f.mgmt)).toMatchObject({ phase: "Queued" });
    expect(statusOf(f.mgmt)?.cluster).toBeUndefined();
  });
});

const MIRRORS = "/apis/berth.dev/v1alpha1/namespaces/berth-sessions/sessionmirrors";
const mirrorDeletes = (gpu: MemoryKube) =>
  gpu.log.filter((r) => r.method === "DELETE" && r.path.startsWith(MIRRORS)).map((r) => r.status);
const setDesired = (f: { mgmt: MemoryKube; name: string }, desiredState: string) =>
  f.mgmt.request("PATCH", `/apis/berth.dev/v1alpha1/namespaces/org-acme/sessions/${f.name}`, {
    body: { spec: { desiredState } },
  });

describe("a mirror where the session wants no pod", () => {
  it("is deleted again after a failed DELETE when a lost node puts the session back in the queue", async () => {
    const f = await aRunningSession();
    let refuse = 2;
    f.gpu.fail = (method, path) => (method === "DELETE" && path.startsWith(MIRRORS) && refuse-- > 0 ? 500 : undefined);
    f.store.nodes = [{ ...(f.store.nodes[0] as InventoryNodeView), ready: false }];
    f.store.inventoryChanged();
    await until("the mirror deleted", () => mirrorOf(f.gpu) === undefined, 5_000);
    await f.controller.idle();
    expect(mirrorDeletes(f.gpu).slice(0, 3)).toEqual([500, 500, 200]);
    expect(statusOf(f.mgmt)).toMatchObject({ phase: "Queued" });
  });

  it("is deleted when the session failed, after a failed DELETE", async () => {
    const f = await aRunningSession();
    let refuse = 1;
    f.gpu.fail = (method, path) => (method === "DELETE" && path.startsWith(MIRRORS) && refuse-- > 0 ? 500 : undefined);
    f.store.report({
      sessionId: f.id,
      phase: "Failed",
      reason: "ImagePullFailed",
      message: "ImagePullBackOff",
      revision: mirrorOf(f.gpu)?.revision as number,
    });
    await until("the mirror deleted", () => mirrorOf(f.gpu) === undefined, 5_000);
    expect(statusOf(f.mgmt)?.phase).toBe("Failed");
    expect(mirrorDeletes(f.gpu).slice(0, 2)).toEqual([500, 200]);
  });

  it("is deleted when a Failed session is terminated, and holds its GPU until it is reported gone", async () => {
    const f = aFleet(2, 1);
    const [failed, waiting] = f.names as [string, string];
    const id = f.ids[0] as string;
    const s = f.mgmt.list("sessions")[0] as unknown as Session;
    s.status = { phase: "Failed", cluster: CLUSTER, gpuModel: H100 };
    s.spec.desiredState = "Terminated";
    f.mgmt.put("sessions", s as never);
    f.gpu.put("sessionmirrors", { metadata: { name: failed, namespace: "berth-sessions" } });
    f.store.revisions.set(id, 1);
    f.store.reps = [
      { clusterId: CLUSTER, sessionId: id, phase: "Failed", reason: "ImagePullFailed", revision: 1, at: "t1" },
    ];
    // Accepted; its finalizer keeps it while the operator removes the pod.
    f.gpu.fail = (method) => (method === "DELETE" ? 200 : undefined);
    running = f.controller;
    await f.controller.start();
    await until("the mirror deleted", () => mirrorDeletes(f.gpu).length > 0, 5_000);
    await f.controller.idle();
    const phaseOf = (name: string) =>
      (f.mgmt.list("sessions") as unknown as Session[]).find((x) => x.metadata.name === name)?.status?.phase;
    expect(phaseOf(failed)).toBe("Terminated");
    expect(f.gpu.log.filter((r) => r.method === "DELETE").every((r) => r.path === `${MIRRORS}/${failed}`)).toBe(true);
    // Its pod may hold the GPU until the operator says the mirror is gone.
    expect(phaseOf(waiting)).toBe("Queued");
    f.store.report({ sessionId: id, phase: "Terminated", revision: 1 });
    await until("the other placed", () => phaseOf(waiting) === "Starting", 5_000);
  });

  it("is deleted once its cluster answers again when the session was paused while that cluster was silent", async () => {
    const f = await aRunningSession(1, {
      pollMs: 20,
      timing: { ...DEFAULT_TIMING, silentClusterGiveUpMs: 0 },
    });
    // Silent: its operator does not call, and its apiserver does not answer.
    f.store.silent = true;
    f.gpu.fail = (method, path) => (method === "DELETE" && path.startsWith(MIRRORS) ? 503 : undefined);
    await until("Unknown", () => statusOf(f.mgmt)?.phase === "Unknown");
    await setDesired(f, "Paused");
    await until("Paused", () => statusOf(f.mgmt)?.phase === "Paused");
    expect(mirrorOf(f.gpu)).toBeDefined();
    // Back: its operator reports the pod it still runs.
    f.gpu.fail = () => undefined;
    f.store.silent = false;
    f.store.report({ sessionId: f.id, phase: "Running", revision: mirrorOf(f.gpu)?.revision as number });
    await until("the mirror deleted", () => mirrorOf(f.gpu) === undefined, 5_000);
    expect(statusOf(f.mgmt)?.phase).toBe("Paused");
  });
});
