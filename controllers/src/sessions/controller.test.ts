// The controller's wiring: its parts started and stopped together, idle() once all of them are.
import { afterEach, describe, expect, it } from "vitest";
import { aFleet, stopFleets, until } from "./fleet.test-support.ts";

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
});
