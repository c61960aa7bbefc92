// The placement pass, in-process against a fleet in memory: what a pass writes when it places many
// sessions at once, when some of its writes fail, and which changes start one.
import type { Session } from "@berth/crds";
import { afterEach, describe, expect, it } from "vitest";
import {
  aController,
  aFleet,
  aRunningSession,
  CLUSTER,
  H100,
  mirrorCreates,
  mirrorOf,
  records,
  standing,
  statusOf,
  statusWrites,
  stopFleets,
  until,
} from "./fleet.test-support.ts";
import { DEFAULT_TIMING } from "./lifecycle.ts";
import { placementMatters } from "./placement-pass.ts";
import { aSession } from "./session-builder.test-support.ts";

afterEach(stopFleets);

describe("a placement pass over many waiting sessions", () => {
  it("places each once and dispatches each mirror at a revision taken in one batch for the pass", async () => {
    const f = aFleet(12);
    // One of them ran before (paused, resumed): its next mirror must outrank the ones it had.
    f.store.revisions.set(f.ids[3] as string, 5);
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
    // Starting is recorded in each history row and never written to the resource.
    expect([...records(f.store, "Starting").values()]).toEqual(Array(12).fill(1));
    expect(statusWrites(f.mgmt, "Starting")).toEqual(new Map());
    expect([...mirrorCreates(f.gpu).values()]).toEqual(Array(12).fill(1));
    for (const s of standing(f))
      expect(s.status).toMatchObject({ phase: "Starting", cluster: CLUSTER, gpuModel: H100 });
  });

  it("places the rest once and nothing twice when the revision batch and some placement records fail", async () => {
    const f = aFleet(12);
    f.store.failBatches = 1;
    const refused = new Set(f.names.filter((_, i) => i % 3 === 1));
    f.store.refuseRecord = (name, phase) => phase === "Starting" && refused.delete(name);
    await f.controller.start();
    await until("12 mirrors", () => f.gpu.list("sessionmirrors").length === 12);
    await f.controller.idle();

    expect(refused.size).toBe(0);
    // Each placed once, each mirror written once, at the revision its (successful) placement took.
    expect([...records(f.store, "Starting").values()]).toEqual(Array(12).fill(1));
    expect([...mirrorCreates(f.gpu).values()]).toEqual(Array(12).fill(1));
    expect(f.gpu.log.filter((r) => r.status === 409)).toEqual([]);
    expect(f.store.singles).toEqual([]);
    for (const m of f.gpu.list("sessionmirrors")) {
      const id = (m.spec as { sessionId: string }).sessionId;
      expect((m.spec as { revision: number }).revision).toBe(f.store.revisions.get(id));
    }
    // The four refused records were placed by a later pass, whose batch took them a newer revision.
    expect(f.store.batches.length).toBeGreaterThanOrEqual(2);
    expect(f.controller.counts.placements).toBe(12);
  });

  it("is not placed again by a new leader when only its history row holds the placement", async () => {
    const f = aFleet(2, 1);
    await f.controller.start();
    await until("1 mirror", () => f.gpu.list("sessionmirrors").length === 1);
    await f.controller.idle();
    await f.controller.stop();
    const [placed, waiting] = standing(f) as [Session, Session];
    expect([placed.status?.phase, waiting.status?.phase]).toEqual(["Starting", "Queued"]);
    // The resource does not say it holds the GPU; only the history row's interim status does.
    expect((f.mgmt.list("sessions")[0] as unknown as Session).status?.phase).toBeUndefined();
    const batches = f.store.batches.length;

    const next = aController(f);
    await next.start();
    await next.idle();
    expect(f.store.term).toBe(2);
    expect(f.store.batches.length).toBe(batches);
    expect(f.gpu.list("sessionmirrors")).toHaveLength(1);
    expect(standing(f).map((s) => s.status?.phase)).toEqual(["Starting", "Queued"]);

    // Its pod runs: the new leader writes Running to the resource, and the history row's interim is gone.
    const id = f.ids[0] as string;
    f.store.report({ sessionId: id, phase: "Running", revision: f.store.revisions.get(id) as number });
    await until("Running", () => (f.mgmt.list("sessions")[0] as unknown as Session).status?.phase === "Running");
    expect((f.mgmt.list("sessions")[0] as unknown as Session).status).toMatchObject({ cluster: CLUSTER });
    expect(f.store.interims.has(id)).toBe(false);
  });

  it("runs no pass when a placed session's pod runs (Starting in its row, Pending on its resource → Running)", async () => {
    const f = aFleet(1);
    await f.controller.start();
    await until("its mirror", () => mirrorOf(f.gpu) !== undefined);
    await f.controller.idle();
    const passes = f.controller.counts.placementPasses;
    const id = f.ids[0] as string;
    f.store.report({ sessionId: id, phase: "Running", revision: f.store.revisions.get(id) as number });
    await until("Running", () => statusOf(f.mgmt)?.phase === "Running");
    await f.controller.idle();
    expect(f.controller.counts.placementPasses).toBe(passes);
  });

  it("leaves the sessions that do not fit queued, in order, without taking revisions for them", async () => {
    const f = aFleet(6, 4);
    await f.controller.start();
    await until("4 mirrors", () => f.gpu.list("sessionmirrors").length === 4);
    await f.controller.idle();

    expect(f.store.batches.map((b) => [...b].sort())).toEqual([f.ids.slice(0, 4)]);
    const byName = new Map(standing(f).map((s) => [s.metadata.name, s]));
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

describe("a session whose pod found no node", () => {
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
    // Past the slow write: the step after Pending is recorded (whatever it is), and all it woke settled.
    await until("the step after Pending recorded", () =>
      f.store.transitions.some(([, before]) => before === "Pending"),
    );
    await f.controller.idle();
    expect(statusWrites(f.mgmt, "Starting")).toEqual(new Map());
    expect(statusOf(f.mgmt)).toMatchObject({ phase: "Queued" });
    expect(statusOf(f.mgmt)?.cluster).toBeUndefined();
  });
});

describe("the placement policy a pass uses", () => {
  it("asks the store at every pass and still places when reading it fails", async () => {
    const f = aFleet(2);
    let asked = 0;
    f.store.placementPolicy = async () => {
      asked++;
      throw new Error("the settings table is gone for a moment");
    };
    await f.controller.start();
    await until("2 mirrors", () => f.gpu.list("sessionmirrors").length === 2);
    await f.controller.idle();
    expect(asked).toBeGreaterThan(0);
  });
});
