import { describe, expect, it } from "vitest";
import { planReclaim, type Reclaim, type ReclaimInput, type Signals } from "./plan.ts";

const T0 = Date.parse("2026-11-26T08:00:00Z");
const at = (min: number) => new Date(T0 + min * 60_000);
const quiet = (lastMin: number | null = null): Signals => ({
  gpu: { state: "known", lastActiveAt: lastMin === null ? null : at(lastMin) },
  traffic: { state: "known", lastActiveAt: null },
  notebook: { state: "known", lastActiveAt: null },
});

/** Runs the plan once a minute from `from` to `to`, carrying the status as the worker does. */
function tick(base: Omit<ReclaimInput, "now">, from: number, to: number, signalsAt?: (min: number) => Signals) {
  let status: Reclaim | undefined = base.status;
  const log: { min: number; warnings: string[]; pause?: string }[] = [];
  for (let m = from; m <= to; m++) {
    const p = planReclaim({ ...base, now: at(m), status, ...(signalsAt ? { signals: signalsAt(m) } : {}) });
    if (p.warnings.length > 0 || p.pause)
      log.push({
        min: m,
        warnings: p.warnings.map((w) => `${w.kind}-${w.minutesBefore}`),
        ...(p.pause ? { pause: p.pause } : {}),
      });
    status = p.status;
    if (p.pause) break;
  }
  return log;
}

const base = { periodStart: at(0), idleTimeoutMinutes: 60, maxRuntimeMinutes: 24 * 60, signals: quiet() };

describe("the idle rule", () => {
  it("warns at T−15 and T−5 and pauses at the tick of the deadline, not before", () => {
    expect(tick(base, 0, 120)).toEqual([
      { min: 45, warnings: ["idle-15"] },
      { min: 55, warnings: ["idle-5"] },
      { min: 60, warnings: [], pause: "Idle" },
    ]);
  });

  it("counts from the last activity of any signal", () => {
    const s = (m: number): Signals => ({
      ...quiet(),
      traffic: { state: "known", lastActiveAt: m >= 30 ? at(30) : null },
    });
    expect(tick(base, 0, 200, s).at(-1)).toEqual({ min: 90, warnings: [], pause: "Idle" });
  });

  it("activity after a warning withdraws it and starts a new stretch", () => {
    const s = (m: number): Signals => ({
      ...quiet(),
      notebook: { state: "known", lastActiveAt: m >= 50 ? at(50) : null },
    });
    expect(tick(base, 0, 200, s)).toEqual([
      { min: 45, warnings: ["idle-15"] },
      { min: 95, warnings: ["idle-15"] },
      { min: 105, warnings: ["idle-5"] },
      { min: 110, warnings: [], pause: "Idle" },
    ]);
  });

  it("never pauses while a signal is unknown, and owes both warnings once it is known again", () => {
    const s = (m: number): Signals =>
      m < 100 ? { ...quiet(), gpu: { state: "unknown", why: "no GPU metrics" } } : quiet();
    expect(tick(base, 0, 200, s)).toEqual([
      { min: 100, warnings: ["idle-5"] },
      { min: 105, warnings: [], pause: "Idle" },
    ]);
  });

  it("keep running counts as activity at the moment it was asked", () => {
    expect(tick({ ...base, keptAt: at(56) }, 0, 200)).toEqual([
      { min: 101, warnings: ["idle-15"] },
      { min: 111, warnings: ["idle-5"] },
      { min: 116, warnings: [], pause: "Idle" },
    ]);
  });

  it("does not pause within 10 minutes of a resume", () => {
    const short = { ...base, idleTimeoutMinutes: 5 };
    expect(tick(short, 0, 30).at(-1)).toEqual({ min: 10, warnings: [], pause: "Idle" });
  });

  it("a timeout of 0 turns the rule off", () => {
    expect(tick({ ...base, idleTimeoutMinutes: 0, maxRuntimeMinutes: 10_000 }, 0, 600)).toEqual([]);
  });

  it("a signal that does not apply (no notebook server) leaves the others to decide", () => {
    const s = (): Signals => ({ ...quiet(), notebook: { state: "none" } });
    expect(tick(base, 0, 120, s).at(-1)).toEqual({ min: 60, warnings: [], pause: "Idle" });
  });

  it("a status of an earlier run period is ignored", () => {
    const old: Reclaim = {
      period: at(-500).toISOString(),
      idle: { since: at(-500).toISOString(), deadline: at(-440).toISOString(), warned: [15, 5] },
    };
    const p = planReclaim({ ...base, now: at(1), status: old });
    expect(p.pause).toBeUndefined();
    expect(p.status).toBeUndefined();
    expect(p.changed).toBe(true);
  });
});

describe("the running-time limit", () => {
  it("warns at T−60, T−15, T−5 and pauses at the limit whatever the signals say", () => {
    const busy = (m: number): Signals => ({ ...quiet(), gpu: { state: "known", lastActiveAt: at(m) } });
    expect(tick({ ...base, maxRuntimeMinutes: 120 }, 0, 200, busy)).toEqual([
      { min: 60, warnings: ["runtime-60"] },
      { min: 105, warnings: ["runtime-15"] },
      { min: 115, warnings: ["runtime-5"] },
      { min: 120, warnings: [], pause: "MaxRuntime" },
    ]);
  });

  it("a resumed session starts a fresh period", () => {
    const resumed = { ...base, periodStart: at(1000), maxRuntimeMinutes: 120 };
    expect(
      tick(resumed, 1000, 1200, (m) => ({ ...quiet(), gpu: { state: "known", lastActiveAt: at(m) } })).at(-1),
    ).toEqual({
      min: 1120,
      warnings: [],
      pause: "MaxRuntime",
    });
  });
});
