import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PeriodicPass } from "./periodic.ts";

/** A pass whose runs end only when the test says so. */
function gatedPass() {
  const runs: { end(err?: Error): void }[] = [];
  return {
    runs,
    pass: () =>
      new Promise<void>((resolve, reject) => {
        runs.push({ end: (err) => (err ? reject(err) : resolve()) });
      }),
  };
}

describe("a periodic pass", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("runs at start, then one interval after each pass ends, never two at once", async () => {
    const g = gatedPass();
    const p = new PeriodicPass({ intervalMs: 1000, pass: g.pass, onError: () => {} });
    p.start();
    expect(g.runs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(5000);
    expect(g.runs).toHaveLength(1);
    g.runs[0]?.end();
    await vi.advanceTimersByTimeAsync(999);
    expect(g.runs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(g.runs).toHaveLength(2);
    g.runs[1]?.end();
    await p.stop();
  });

  it("waits one interval first when not immediate", async () => {
    const g = gatedPass();
    const p = new PeriodicPass({ intervalMs: 1000, pass: g.pass, onError: () => {}, immediate: false });
    p.start();
    expect(g.runs).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1000);
    expect(g.runs).toHaveLength(1);
    g.runs[0]?.end();
    await p.stop();
  });

  it("hands a failed pass to onError and retries it on the next pass", async () => {
    const g = gatedPass();
    const errors: unknown[] = [];
    const p = new PeriodicPass({ intervalMs: 10, pass: g.pass, onError: (e) => errors.push(e) });
    p.start();
    g.runs[0]?.end(new Error("apiserver down"));
    await vi.advanceTimersByTimeAsync(10);
    expect(errors.map(String)).toEqual(["Error: apiserver down"]);
    expect(g.runs).toHaveLength(2);
    g.runs[1]?.end();
    await p.stop();
  });

  it("counts a pass that throws before returning its promise as failed", async () => {
    const errors: unknown[] = [];
    const p = new PeriodicPass({
      intervalMs: 10,
      pass: () => {
        throw new Error("no promise");
      },
      onError: (e) => errors.push(e),
    });
    p.start();
    await p.stop();
    expect(errors.map(String)).toEqual(["Error: no promise"]);
  });

  it("stops: waits for the pass in flight and starts none after it", async () => {
    const g = gatedPass();
    const p = new PeriodicPass({ intervalMs: 10, pass: g.pass, onError: () => {} });
    p.start();
    let stopped = false;
    const stopping = p.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    g.runs[0]?.end();
    await stopping;
    await vi.advanceTimersByTimeAsync(1000);
    expect(g.runs).toHaveLength(1);
    expect(p.running).toBe(false);
  });

  it("started again after a stop, runs one chain of passes, not two", async () => {
    const g = gatedPass();
    const p = new PeriodicPass({ intervalMs: 10, pass: g.pass, onError: () => {} });
    p.start();
    void p.stop();
    p.start();
    expect(g.runs).toHaveLength(2);
    g.runs[0]?.end();
    g.runs[1]?.end();
    await vi.advanceTimersByTimeAsync(10);
    expect(g.runs).toHaveLength(3);
    g.runs[2]?.end();
    await p.stop();
  });
});
