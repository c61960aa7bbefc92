// The controller's wiring: its parts started and stopped together, idle() once all of them are.
import { afterEach, describe, expect, it } from "vitest";
import {
  aController,
  aFleet,
  aRunningSession,
  mirrorCreates,
  mirrorOf,
  records,
  setDesired,
  statusOf,
  statusWrites,
  stopFleets,
  until,
} from "./fleet.test-support.ts";

afterEach(stopFleets);

describe("the session controller", () => {
  it("is idle only once its placements, their dispatch and their Events are all done", async () => {
    const f = aFleet(3);
    await f.controller.start();
    await until("3 mirrors", () => f.gpu.list("sessionmirrors").length === 3);
    for (const id of f.ids) f.store.report({ sessionId: id, phase: "Running", revision: 1 });
    await until("3 Running", () => f.controller.counts.events >= 3);
    await f.controller.idle();
    // Every Event handed over is posted by then (one per session that started: placing has none).
    expect(f.mgmt.list("events").length).toBe(f.controller.counts.events);
    expect(f.controller.counts.events).toBeGreaterThanOrEqual(3);
  });

  it("stops with nothing left running, and writes nothing after", async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    const baseline = timers();
    const f = aFleet(2);
    await f.controller.start();
    await until("both placed", () => f.gpu.list("sessionmirrors").length === 2);
    await f.controller.stop();
    // Nothing left that could wake it: no watch open, no subscription to reports, no timer of its own.
    expect(f.mgmt.watching + f.gpu.watching).toBe(0);
    expect(f.store.listening).toBe(false);
    expect(timers()).toBeLessThanOrEqual(baseline);
    const writes = f.mgmt.log.length + f.gpu.log.length;
    f.store.report({ sessionId: f.ids[0] as string, phase: "Running", revision: 1 });
    await f.controller.idle();
    expect(f.mgmt.log.length + f.gpu.log.length).toBe(writes);
  });

  it("ends rows whose create never wrote their resource, and only those", async () => {
    const f = await aRunningSession();
    const old = new Date(Date.now() - 5 * 60_000);
    f.store.rows = [
      // Cut off between its row and its resource, minutes ago.
      {
        id: "ses_cutoff000000000000",
        namespace: "org-acme",
        name: "ses-cutoff000000000000",
        createdAt: old,
        phase: "Pending",
      },
      // The running session: its resource exists.
      { id: f.id, namespace: "org-acme", name: f.name, createdAt: old, phase: "Pending" },
      // A create still in its request.
      {
        id: "ses_young0000000000000",
        namespace: "org-acme",
        name: "ses-young0000000000000",
        createdAt: new Date(),
        phase: "Pending",
      },
    ];
    expect(await f.controller.sweepUnmadeCreates()).toBe(1);
    expect(f.store.rows.map((r) => r.phase)).toEqual(["Failed", "Pending", "Pending"]);
    // The informer's word is checked with a read before a row is ended.
    expect(f.mgmt.log.some((r) => r.method === "GET" && r.path.endsWith("/ses-cutoff000000000000"))).toBe(true);
    expect(await f.controller.sweepUnmadeCreates()).toBe(0);
  });
});

// A new leader reconciles nothing before it has read the mirror revisions it reads reports against
// (docs/dev/sessions.md, "A new leader"): before, its informers' first list reconciled every session
// with none remembered, so every report was dropped.
describe("a new leader", () => {
  /** A Running session whose cluster went silent under the first leader, which then died. */
  async function unknownAndLeaderGone() {
    const opts = { pollMs: 20, reportGraceMs: 300 };
    const f = await aRunningSession(1, opts);
    const startedAt = statusOf(f.mgmt)?.startedAt;
    f.store.silent = true;
    await until("Unknown", () => statusOf(f.mgmt)?.phase === "Unknown", 3_000);
    await f.controller.idle();
    await f.controller.stop();
    // The cluster reports again before the next leader starts.
    f.store.silent = false;
    const revision = mirrorOf(f.gpu)?.revision as number;
    const startings = records(f.store, "Starting").get(f.name) ?? 0;
    return { ...f, opts, startedAt, revision, startings, takes: f.store.singles.length + f.store.batches.length };
  }

  it("takes the Running report of a session whose cluster came back, without writing its mirror again", async () => {
    const f = await unknownAndLeaderGone();
    f.store.report({ sessionId: f.id, phase: "Running", revision: f.revision });
    const next = aController(f, f.opts);
    await next.start();
    await until("Running", () => statusOf(f.mgmt)?.phase === "Running", 3_000);
    await next.idle();
    // Straight back: the run it was on goes on, and its mirror is the one the operator reported.
    expect(statusOf(f.mgmt)?.startedAt).toBe(f.startedAt);
    expect(records(f.store, "Starting").get(f.name) ?? 0).toBe(f.startings);
    expect(mirrorOf(f.gpu)?.revision).toBe(f.revision);
    expect(f.store.singles.length + f.store.batches.length).toBe(f.takes);
  });

  it("whose start fails before it has read them writes nothing", async () => {
    const f = await unknownAndLeaderGone();
    f.store.report({ sessionId: f.id, phase: "Running", revision: f.revision });
    f.store.mirrorStates = async () => {
      throw new Error("the database is gone for a moment");
    };
    const writes = () => [...f.mgmt.log, ...f.gpu.log].filter((r) => r.method !== "GET").length;
    const before = writes();
    const next = aController(f, f.opts);
    await expect(next.start()).rejects.toThrow("gone for a moment");
    await next.stop();
    // The worker retries the start with a new controller; this half-started one touched nothing.
    expect(writes()).toBe(before);
    expect(f.store.interims.has(f.id)).toBe(false);
  });

  it("still drops a report of an earlier mirror than the one it remembers", async () => {
    const f = await unknownAndLeaderGone();
    f.store.report({ sessionId: f.id, phase: "Running", revision: f.revision - 1 });
    const next = aController(f, f.opts);
    await next.start();
    // Not taken: the session waits for its pod, and its mirror is written again at a newer revision.
    await until("the mirror written again", () => (mirrorOf(f.gpu)?.revision as number) > f.revision, 3_000);
    await next.idle();
    expect(statusOf(f.mgmt)?.phase).toBe("Unknown"); // on the resource; its row says Starting
    expect(f.store.interims.get(f.id)?.status.phase).toBe("Starting");
  });
});

// The soak's session stuck Terminating (docs/dev/soak.md): its leader died as it ended. Dead before it
// took the operator's report, it leaves nothing a new leader misses. Dead between writing Terminated to
// the resource and recording it in the history row, it left the row behind for good: only its own memory
// knew the record was owed (SessionMemory.unrecorded).
describe("a new leader after its predecessor died ending a session", () => {
  it("ends a Terminating session whose mirror went while no one led, from the report it reads at its start", async () => {
    const f = await aRunningSession();
    await setDesired(f, "Terminated");
    await until("Terminating recorded", () => f.store.interims.get(f.id)?.status.phase === "Terminating");
    await until("its mirror deleted", () => f.gpu.list("sessionmirrors").length === 0);
    await f.controller.stop();
    f.store.report({ sessionId: f.id, phase: "Terminated", revision: 1 });

    const next = aController(f);
    await next.start();
    await until("Terminated", () => f.store.phases.get(f.id) === "Terminated", 3_000);
    await next.idle();
    expect(statusOf(f.mgmt)?.phase).toBe("Terminated");
    expect(records(f.store, "Terminated").get(f.name)).toBe(1);
  });

  it("records the Terminated its predecessor wrote to the resource, once, and touches nothing else", async () => {
    const f = await aRunningSession();
    await setDesired(f, "Terminated");
    await until("Terminating recorded", () => f.store.interims.get(f.id)?.status.phase === "Terminating");
    // The operator reports the mirror gone; the leader writes Terminated to the resource and dies before
    // the record lands (here: the record never lands, and the leader stops before a retry).
    f.store.refuseRecord = (_name, phase) => phase === "Terminated";
    f.store.report({ sessionId: f.id, phase: "Terminated", revision: mirrorOf(f.gpu)?.revision ?? 1 });
    await until("Terminated on the resource", () => statusOf(f.mgmt)?.phase === "Terminated");
    await f.controller.stop();
    f.store.refuseRecord = undefined;
    expect(f.store.phases.get(f.id)).toBe("Terminating");
    const mirrorsWritten = mirrorCreates(f.gpu).get(f.name);

    const next = aController(f);
    await next.start();
    await until("Terminated recorded", () => f.store.phases.get(f.id) === "Terminated", 3_000);
    await next.idle();
    // Recorded from where the row stood, and the row's interim status cleared: it now follows the resource.
    expect(f.store.transitions.filter(([name, , after]) => name === f.name && after === "Terminated")).toEqual([
      [f.name, "Terminating", "Terminated"],
    ]);
    expect(f.store.interims.has(f.id)).toBe(false);
    // Nothing else: the resource is not written again, no mirror (so no pod) is made again.
    expect(statusWrites(f.mgmt, "Terminated").get(f.name)).toBe(1);
    expect(mirrorCreates(f.gpu).get(f.name)).toBe(mirrorsWritten);
    expect(f.gpu.list("sessionmirrors")).toEqual([]);

    // A row that follows its resource is left alone by the leader after.
    await next.stop();
    const recorded = f.store.transitions.length;
    const third = aController(f);
    await third.start();
    await third.idle();
    expect(f.store.transitions.length).toBe(recorded);
  });
});
