import { describe, expect, it } from "vitest";
import {
  DEFAULT_TIMING,
  placedStatus,
  planSession,
  queueSince,
  type SessionObserved,
  waitingStatus,
} from "./lifecycle.ts";
import { aSession } from "./session-builder.test-support.ts";

const now = new Date("2026-11-22T07:00:00Z");
const observe = (o: Partial<SessionObserved> & Pick<SessionObserved, "session">): SessionObserved => ({
  now,
  mirror: "present",
  restartsRequested: 0,
  restartsApplied: 0,
  cluster: o.session.status?.cluster ? { registered: true, reporting: true } : undefined,
  ...o,
});
const report = (phase: string, over: Record<string, unknown> = {}) => ({
  phase,
  node: "gpu-a-1",
  reason: "PodRunning",
  message: "",
  revision: 1,
  at: now.toISOString(),
  ...over,
});
const cond = (st: { conditions?: { type: string; status: string; reason: string }[] } | undefined, type: string) =>
  st?.conditions?.find((c) => c.type === type);

describe("the session lifecycle", () => {
  it("hands a new session to placement without writing anything", () => {
    const p = planSession(observe({ session: aSession().build() }));
    expect(p).toMatchObject({ needsPlacement: true, deleteResource: false });
    expect(p.status).toBeUndefined();
  });

  it("becomes Running when the operator reports the pod ready, with connect paths and billing on", () => {
    const p = planSession(
      observe({ session: aSession().onCluster("clu_a").starting().build(), report: report("Running") }),
    );
    expect(p.status).toMatchObject({
      phase: "Running",
      node: "gpu-a-1",
      connect: { lab: "/proxy/ses-abc/lab", code: "/proxy/ses-abc/code/" },
    });
    expect(cond(p.status, "Ready")).toMatchObject({ status: "True", reason: "PodRunning" });
    expect(cond(p.status, "Billable")).toMatchObject({ status: "True", reason: "Metering" });
    expect(p.events).toEqual([{ type: "Normal", reason: "Started", message: "running on gpu-a-1 of clu_a" }]);
  });

  it("says which rate applies once billing is on: a borrowed session's is the borrowed rate", () => {
    const billed = (cls?: "borrowed" | "guaranteed") => {
      const session = aSession().onCluster("clu_a").starting().build();
      if (cls) session.spec.capacityClass = cls;
      const st = planSession(observe({ session, report: report("Running") })).status;
      return st?.conditions?.find((c) => c.type === "Billable")?.message;
    };
    expect(billed("borrowed")).toBe("usage is charged at the borrowed rate (the offering's borrowed rate multiplier)");
    expect(billed("guaranteed")).toBe("usage is charged at the offering's rate");
    expect(billed()).toBe("usage is charged at the offering's rate");
  });

  it("tells `kubectl describe` the story in one Event per state a person reads, none for the steps between", () => {
    const events = (o: SessionObserved) => planSession(o).events.map((e) => `${e.reason}: ${e.message}`);
    const placed = placedStatus(aSession().build(), { clusterId: "clu_a", reason: "Placed", message: "m" }, "X", now);
    expect(placed.events).toEqual([]);
    expect(
      events(observe({ session: aSession().onCluster("clu_a").starting().build(), report: report("Running") })),
    ).toEqual(["Started: running on gpu-a-1 of clu_a"]);
    const pausing = aSession().onCluster("clu_a").running().desired("Paused").build();
    expect(events(observe({ session: pausing }))).toEqual([]);
    const gone = aSession().onCluster("clu_a").phase("Pausing").desired("Paused").build();
    expect(events(observe({ session: gone, mirror: "absent" }))).toEqual([
      "PausedByUser: the pod on clu_a is gone and its GPU is free",
    ]);
    const resuming = aSession().onCluster("clu_a").phase("Resuming").build();
    expect(events(observe({ session: resuming, report: report("Running") }))).toEqual([
      "Resumed: resumed on gpu-a-1 of clu_a",
    ]);
    const terminating = aSession().onCluster("clu_a").running().desired("Terminated").build();
    expect(events(observe({ session: terminating }))).toEqual([]);
    const removed = aSession().onCluster("clu_a").phase("Terminating").desired("Terminated").build();
    expect(events(observe({ session: removed, mirror: "absent" }))).toEqual(["Terminated: removed from clu_a"]);
  });

  it("writes nothing when a running session's report says what it already says", () => {
    const first = planSession(
      observe({ session: aSession().onCluster("clu_a").starting().build(), report: report("Running") }),
    );
    const again = planSession(
      observe({ session: { ...aSession().build(), status: first.status }, report: report("Running") }),
    );
    expect(again.status).toBeUndefined();
    expect(again.events).toEqual([]);
  });

  it("writes its mirror again when a started session has no report and no mirror", () => {
    const p = planSession(observe({ session: aSession().onCluster("clu_a").starting().build(), mirror: "absent" }));
    expect(p.mirror).toEqual({ op: "ensure" });
  });

  it("pauses: Pausing deletes the mirror, the pod's disappearance makes it Paused and frees the cluster", () => {
    const running = aSession().onCluster("clu_a").running().desired("Paused").build();
    const p1 = planSession(observe({ session: running, report: report("Running") }));
    expect(p1.status?.phase).toBe("Pausing");
    expect(p1.mirror).toEqual({ op: "delete", propagation: "Background" });
    expect(cond(p1.status, "Billable")?.status).toBe("False");

    const pausing = { ...running, status: p1.status };
    expect(planSession(observe({ session: pausing, report: report("Terminating") })).status).toBeUndefined();
    const p2 = planSession(observe({ session: pausing, report: report("Terminated") }));
    expect(p2.status).toMatchObject({ phase: "Paused" });
    expect(p2.status?.cluster).toBeUndefined();
    expect(p2.status?.pausedAt).toBe("2026-11-22T07:00:00Z");
  });

  it("says who paused: billing's reason on the condition and a Warning event", () => {
    const s = aSession().onCluster("clu_a").running().desired("Paused").build();
    s.metadata.annotations = { "berth.dev/pause-reason": "InsufficientCredits" };
    const p = planSession(observe({ session: s, report: report("Running") }));
    expect(cond(p.status, "Ready")).toMatchObject({ status: "False", reason: "InsufficientCredits" });
    const done = planSession(observe({ session: { ...s, status: p.status }, report: report("Terminated") }));
    expect(done.events).toEqual([expect.objectContaining({ type: "Warning", reason: "InsufficientCredits" })]);
  });

  it("pauses a queued session at once, since it holds no GPU", () => {
    const p = planSession(observe({ session: aSession().phase("Queued").desired("Paused").build() }));
    expect(p.status?.phase).toBe("Paused");
    expect(p.mirror).toBeUndefined();
  });

  it("resumes a paused session through placement", () => {
    const p = planSession(observe({ session: aSession().phase("Paused").build() }));
    expect(p.needsPlacement).toBe(true);
  });

  it("terminates: Terminating deletes the mirror, Terminated when it is gone, deleted after retention", () => {
    const s = aSession().onCluster("clu_a").running().desired("Terminated").build();
    const p1 = planSession(observe({ session: s }));
    expect(p1.status?.phase).toBe("Terminating");
    expect(p1.mirror?.op).toBe("delete");
    const p2 = planSession(observe({ session: { ...s, status: p1.status }, mirror: "absent" }));
    expect(p2.status).toMatchObject({ phase: "Terminated", terminatedAt: "2026-11-22T07:00:00Z" });
    const later = new Date(now.getTime() + DEFAULT_TIMING.terminatedRetentionMs + 1);
    expect(planSession(observe({ session: { ...s, status: p2.status }, now: later })).deleteResource).toBe(true);
  });

  it("terminates a session that never got a GPU directly", () => {
    const p = planSession(observe({ session: aSession().phase("Queued").desired("Terminated").build() }));
    expect(p.status?.phase).toBe("Terminated");
  });

  it("restarts: a new restart request bumps the mirror's count, and Running comes back with the new revision", () => {
    const s = aSession().onCluster("clu_a").running().build();
    const p = planSession(observe({ session: s, report: report("Running"), restartsRequested: 1, restartsApplied: 0 }));
    expect(p.status?.phase).toBe("Restarting");
    expect(p.mirror).toEqual({ op: "restart", restartCount: 1 });
    const restarting = { ...s, status: p.status };
    expect(
      planSession(
        observe({
          session: restarting,
          report: report("Restarting", { reason: "RestartRequested" }),
          restartsRequested: 1,
          restartsApplied: 1,
        }),
      ).status?.phase ?? "Restarting",
    ).toBe("Restarting");
    expect(
      planSession(
        observe({
          session: restarting,
          report: report("Running", { revision: 2 }),
          restartsRequested: 1,
          restartsApplied: 1,
        }),
      ).status?.phase,
    ).toBe("Running");
  });

  it("becomes Unknown while its cluster is silent, and comes back with the next report", () => {
    const s = aSession().onCluster("clu_a").running().build();
    const p = planSession(observe({ session: s, cluster: { registered: true, reporting: false } }));
    expect(p.status?.phase).toBe("Unknown");
    expect(cond(p.status, "Ready")).toMatchObject({ status: "Unknown", reason: "ClusterNotReporting" });
    const back = planSession(observe({ session: { ...s, status: p.status }, report: report("Running") }));
    expect(back.status).toMatchObject({ phase: "Running", startedAt: "2026-11-22T06:00:05Z" });
  });

  it("places a session again when its node is lost, and tells why", () => {
    const p = planSession(
      observe({
        session: aSession().onCluster("clu_a", "gpu-a-1").running().build(),
        report: report("Running"),
        nodeLost: true,
      }),
    );
    expect(p.status?.phase).toBe("Pending");
    expect(p.status?.cluster).toBeUndefined();
    expect(cond(p.status, "Scheduled")).toMatchObject({ status: "False", reason: "NodeLost" });
    expect(p.mirror).toEqual({ op: "delete", propagation: "Background" });
    expect(p.needsPlacement).toBe(true);
    expect(p.events[0]).toMatchObject({ type: "Warning", reason: "NodeLost" });
  });

  it("places a session elsewhere when its pod finds no node for too long", () => {
    const s = aSession().onCluster("clu_a").starting().build();
    const r = report("Starting", { reason: "Unschedulable", message: "Insufficient nvidia.com/gpu", node: null });
    const young = planSession(observe({ session: s, report: r, unschedulableSince: new Date(now.getTime() - 1000) }));
    expect(young.status?.phase).toBe("Starting");
    expect(cond(young.status, "Ready")?.reason).toBe("Unschedulable");
    const old = planSession(
      observe({ session: s, report: r, unschedulableSince: new Date(now.getTime() - DEFAULT_TIMING.unschedulableMs) }),
    );
    expect(old).toMatchObject({ needsPlacement: true, avoidCluster: "clu_a" });
  });

  it("fails on an image that cannot be pulled and releases the GPU", () => {
    const p = planSession(
      observe({
        session: aSession().onCluster("clu_a").starting().build(),
        report: report("Failed", { reason: "ImagePullFailed", message: "ImagePullBackOff" }),
      }),
    );
    expect(p.status?.phase).toBe("Failed");
    expect(cond(p.status, "Ready")?.reason).toBe("ImagePullFailed");
    expect(p.mirror?.op).toBe("delete");
  });

  it("records placement and queue positions, writing a queue position only when it changes", () => {
    const s = aSession().build();
    const q = waitingStatus(s, { position: 2, reason: "NoCapacity", message: "waiting for 1 × H100 (1 ahead)" }, now);
    expect(q.status).toMatchObject({ phase: "Queued", queue: { position: 2 }, queuedAt: "2026-11-22T07:00:00.000Z" });
    expect(
      waitingStatus(
        { ...s, status: q.status },
        { position: 2, reason: "NoCapacity", message: "waiting for 1 × H100 (1 ahead)" },
        now,
      ).status,
    ).toBeUndefined();
    const placed = placedStatus(
      { ...s, status: q.status },
      { clusterId: "clu_b", reason: "Placed", message: "placed on clu_b" },
      "NVIDIA-L4",
      now,
    );
    expect(placed.status).toMatchObject({ phase: "Starting", cluster: "clu_b", gpuModel: "NVIDIA-L4" });
    expect(placed.status.queue).toBeUndefined();
  });

  it("resumes a paused session as Resuming, also after waiting in the queue", () => {
    const paused = aSession().phase("Paused").status({ pausedAt: "2026-11-22T06:30:00Z" }).build();
    expect(placedStatus(paused, { clusterId: "clu_a", reason: "Placed", message: "" }, "X", now).status.phase).toBe(
      "Resuming",
    );
    const queued = aSession().phase("Queued").status({ pausedAt: "2026-11-22T06:30:00Z" }).build();
    expect(placedStatus(queued, { clusterId: "clu_a", reason: "Placed", message: "" }, "X", now).status.phase).toBe(
      "Resuming",
    );
  });

  it("queues a resumed session from the resume, not from the queue it waited in before it ran", () => {
    const resumed = aSession()
      .phase("Paused")
      .status({
        queuedAt: "2026-11-22T06:00:00.000Z",
        scheduledAt: "2026-11-22T06:01:00Z",
        pausedAt: "2026-11-22T06:30:00Z",
      })
      .build();
    expect(queueSince(resumed, now)).toBe(now.toISOString());
    const w = { position: 1, reason: "NoCapacity", message: "waiting" };
    expect(waitingStatus(resumed, w, now, queueSince(resumed, now)).status?.queuedAt).toBe(now.toISOString());
  });

  it("starts, not resumes, a session placed again after it was resumed once", () => {
    // Paused, resumed (placed after the pause), then its node was lost and it waited in the queue.
    const queued = aSession()
      .phase("Queued")
      .status({ pausedAt: "2026-11-22T06:30:00Z", scheduledAt: "2026-11-22T06:40:00Z" })
      .build();
    expect(placedStatus(queued, { clusterId: "clu_a", reason: "Placed", message: "" }, "X", now).status.phase).toBe(
      "Starting",
    );
  });
});
