// Dispatch: the session's mirror on its GPU cluster, applied after the history knows where the session
// is, restarted, and written again when lost. In-process against a fleet in memory.
import { type InterimStatus, resourcePath, type Session, SessionMirrorKind, sessionPath } from "@berth/crds";
import { examples } from "@berth/crds/testing";
import { afterEach, describe, expect, it } from "vitest";
import type { InventoryNodeView } from "../placement/capacity.ts";
import {
  aFleet,
  aRunningSession,
  CLUSTER,
  mirrorCreates,
  mirrorOf,
  standing,
  statusOf,
  statusWrites,
  stopFleets,
  until,
} from "./fleet.test-support.ts";

afterEach(stopFleets);

describe("dispatch after the history knows where the session is", () => {
  it("writes no mirror before the placement is recorded in the session's history", async () => {
    const f = aFleet(3);
    let open = () => {};
    f.store.gate = new Promise((r) => {
      open = r;
    });
    try {
      await f.controller.start();
      // A placement is its record in the history row (Starting is kept off the resource): held there.
      await until("3 placements held at their history rows", () => f.store.held === 3);
      // No placement is done until its record is: none was handed to dispatch, and no mirror is written.
      expect(f.controller.counts.placements).toBe(0);
      expect(f.gpu.list("sessionmirrors")).toEqual([]);
      expect(statusWrites(f.mgmt, "Starting")).toEqual(new Map());
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
    await f.controller.start();
    await until("1 mirror", () => f.gpu.list("sessionmirrors").length === 1);
    await f.controller.idle();

    expect(statusWrites(f.mgmt, "Starting")).toEqual(new Map());
    // Once, from the status it had before the placement.
    expect(f.store.transitions).toEqual([[f.names[0], undefined, "Starting"]]);
    expect([...mirrorCreates(f.gpu).values()]).toEqual([1]);
  });

  /** A running session whose next history record fails, then its operator's report: what it records. */
  async function reportedWhileARecordFails(report: { phase: string; reason: string; message?: string }) {
    const f = await aRunningSession();
    const byName = () => f.store.transitions.filter(([n]) => n === f.name).map(([, from, to]) => `${from}->${to}`);
    const recorded = byName();
    f.store.failRecords = 1;
    f.store.report({ sessionId: f.id, revision: mirrorOf(f.gpu)?.revision as number, ...report });
    return { f, byName, recorded };
  }

  it("records a status written to the resource whose first record failed on the next reconcile", async () => {
    const { f, byName, recorded } = await reportedWhileARecordFails({
      phase: "Failed",
      reason: "PodFailed",
      message: "the notebook exited",
    });
    await until("Failed", () => statusOf(f.mgmt)?.phase === "Failed");
    await until("the change recorded", () => byName().length > recorded.length, 5_000);
    expect(byName()).toEqual([...recorded, "Running->Failed"]);
  });

  it("keeps an interim status whose record failed off the session until a record succeeds", async () => {
    const { f, byName, recorded } = await reportedWhileARecordFails({ phase: "Starting", reason: "PodPending" });
    await until("the change recorded", () => byName().length > recorded.length, 5_000);
    expect(byName()).toEqual([...recorded, "Running->Starting"]);
    expect(standing(f)[0]?.status?.phase).toBe("Starting");
    // Never on the resource: it still says Running.
    expect(statusOf(f.mgmt)?.phase).toBe("Running");
    expect(statusWrites(f.mgmt, "Starting")).toEqual(new Map());
  });
});

describe("a session's GPUs", () => {
  it("are the count fixed at its creation, not what its preset says after an administrator's change", async () => {
    const f = aFleet(1, 4);
    const s = f.mgmt.list("sessions")[0] as unknown as Session;
    s.spec.gpuCount = 1; // created on the one-GPU preset
    f.mgmt.put("sessions", s as never);
    const preset = examples.ResourcePreset();
    preset.spec.gpuCount = 2; // changed since
    f.mgmt.put("resourcepresets", preset as never);
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
    await f.mgmt.request("PATCH", sessionPath("org-acme", f.name), {
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
    await f.gpu.request("DELETE", resourcePath(SessionMirrorKind, { namespace: "berth-sessions", name: f.name }));
    f.store.report({ sessionId: f.id, phase: "Terminated", revision: before });
    await until("the mirror written again", () => mirrorOf(f.gpu) !== undefined, 5_000);
    expect(mirrorOf(f.gpu)?.revision).toBeGreaterThan(before);
    expect(standing(f)[0]?.status?.phase).toBe("Starting");
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
    expect(standing(f)[0]?.status).toMatchObject({ phase: "Starting", cluster: CLUSTER });
  });

  it("is written again when the placement its own status write started is done before that write's history", async () => {
    const f = await aRunningSession();
    const before = mirrorOf(f.gpu)?.revision as number;
    // The write that takes the session off its lost node is recorded slowly (a loaded database): the
    // placement it starts takes a new revision and records Starting before the old mirror's delete is
    // sent. The store records a session's transitions in call order, so Starting's waits for Pending's.
    const record = f.store.recordTransition.bind(f.store);
    let placedAgain = () => {};
    const placed = new Promise<void>((r) => {
      placedAgain = r;
    });
    let pendingRecorded = Promise.resolve();
    f.store.recordTransition = async (from: Session, to: Session, interim?: InterimStatus) => {
      if (to.status?.phase === "Pending") {
        pendingRecorded = placed.then(() => record(from, to, interim));
        return pendingRecorded;
      }
      if (to.status?.phase === "Starting") {
        placedAgain();
        await pendingRecorded;
      }
      return record(from, to, interim);
    };
    // Room beside the old mirror, which holds its GPU until the operator reports it gone.
    f.store.nodes = [
      { ...(f.store.nodes[0] as InventoryNodeView), ready: false },
      { ...(f.store.nodes[0] as InventoryNodeView), name: "gpu-a-1", gpuAllocatable: 2 },
    ];
    f.store.inventoryChanged();
    await until("the mirror written again", () => (mirrorOf(f.gpu)?.revision ?? 0) > before, 5_000);
    await f.controller.idle();
    expect(mirrorOf(f.gpu)?.revision).toBe(f.store.revisions.get(f.id));
  });
});

describe("the mirror's write", () => {
  /** A fleet whose controller has synced, its one session placed: the mirror's writes as the GPU cluster saw them. */
  async function aPlacedSession() {
    const f = aFleet(1);
    const seen: { method: string; path: string; contentType?: string; query?: unknown }[] = [];
    const serve = f.gpu.request.bind(f.gpu);
    f.gpu.request = (async (method: string, path: string, opts?: Parameters<typeof serve>[2]) => {
      seen.push({ method, path, ...(opts?.contentType ? { contentType: opts.contentType } : {}), query: opts?.query });
      return serve(method, path, opts);
    }) as typeof f.gpu.request;
    await f.controller.start();
    await until("its mirror", () => mirrorOf(f.gpu) !== undefined);
    await f.controller.idle();
    return { ...f, seen };
  }

  it("is one server-side apply as the controller's field manager, forced: the mirror is ours", async () => {
    const f = await aPlacedSession();
    const writes = f.seen.filter((r) => r.path.includes("/sessionmirrors"));
    expect(writes).toEqual([
      {
        method: "PATCH",
        path: resourcePath(SessionMirrorKind, { namespace: "berth-sessions", name: f.names[0] as string }),
        contentType: "application/apply-patch+yaml",
        query: { fieldManager: "berth-worker", force: true },
      },
    ]);
    expect(f.controller.counts.mirrorCreates).toBe(1);
  });

  it("takes over a mirror already there (a new leader's) at the new revision, without a second one", async () => {
    const f = aFleet(1);
    const name = f.names[0] as string;
    const s = f.mgmt.list("sessions")[0] as unknown as Session;
    s.status = { phase: "Starting", cluster: CLUSTER, gpuModel: "NVIDIA-H100-80GB-HBM3" };
    f.mgmt.put("sessions", s as never);
    f.store.revisions.set(f.ids[0] as string, 1);
    // The former leader's mirror, at revision 1, not yet reported on.
    f.gpu.put("sessionmirrors", { metadata: { name, namespace: "berth-sessions" }, spec: { revision: 1 } });
    await f.controller.start();
    await until("the mirror at revision 2", () => mirrorOf(f.gpu)?.revision === 2);
    await f.controller.idle();
    expect(f.gpu.list("sessionmirrors")).toHaveLength(1);
    expect(f.controller.counts).toMatchObject({ mirrorCreates: 0, mirrorUpdates: 1 });
  });

  it("waits for an earlier mirror still being deleted, without writing to it", async () => {
    const f = aFleet(1);
    const name = f.names[0] as string;
    const s = f.mgmt.list("sessions")[0] as unknown as Session;
    s.status = { phase: "Starting", cluster: CLUSTER, gpuModel: "NVIDIA-H100-80GB-HBM3" };
    f.mgmt.put("sessions", s as never);
    f.store.revisions.set(f.ids[0] as string, 1);
    // Its finalizer holds it while the operator removes the pod.
    f.gpu.put("sessionmirrors", {
      metadata: { name, namespace: "berth-sessions", deletionTimestamp: "2026-11-22T06:00:00Z" },
      spec: { revision: 1 },
    });
    await f.controller.start();
    await until("a look at the mirror", () => f.gpu.log.some((r) => r.method === "GET" && r.path.endsWith(name)));
    expect(f.gpu.log.filter((r) => r.apply)).toEqual([]);
    // The pod is gone, the operator lets the mirror go: the next look (a second later) writes the new one.
    f.gpu.objects.clear();
    await until("the new mirror", () => (mirrorOf(f.gpu)?.revision ?? 0) > 1, 5_000);
    expect(f.controller.counts.mirrorCreates).toBe(1);
  });
});
