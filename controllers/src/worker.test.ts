import { examples } from "@berth/crds/testing";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryKube } from "./sessions/memory-kube.test-support.ts";
import type { SessionStore } from "./sessions/store.ts";
import { type RunningWorker, startWorker } from "./worker.ts";

// A store whose mirrorStates (the last step of the controller's start, after it listens) fails `failures`
// times; `listening` counts controllers subscribed and not yet unsubscribed, i.e. running or half-started.
function flakyStore(failures: number) {
  const s = { failures, failed: 0, listening: 0 };
  const store = {
    async clusters() {
      return [];
    },
    async inventory() {
      return [];
    },
    async reports() {
      return [];
    },
    async fence() {},
    async interimStatuses() {
      return new Map();
    },
    async mirrorStates() {
      if (s.failed < s.failures) {
        s.failed++;
        throw new Error("db blip");
      }
      return new Map();
    },
    async recordedPhases() {
      return new Map();
    },
    async listen() {
      s.listening++;
      return async () => {
        s.listening--;
      };
    },
    async purgeEvents() {
      return 0;
    },
  } as unknown as SessionStore;
  return { s, store };
}

const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;

async function until(cond: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("startWorker", () => {
  let w: RunningWorker | undefined;
  afterEach(async () => {
    await w?.stop();
    w = undefined;
  });

  async function start(failures: number, startRetry?: { initialMs: number; maxMs: number }) {
    const mgmt = new MemoryKube();
    mgmt.put("clusters", examples.Cluster() as never);
    const { s, store } = flakyStore(failures);
    const loop = { starts: 0, running: false };
    w = await startWorker({
      kube: mgmt,
      store,
      clusterClient: async () => mgmt,
      log: pino({ level: "silent" }),
      // Long: a busy machine stalling the event loop must not end the term (this is not about failover).
      lease: { durationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 200 },
      ...(startRetry ? { startRetry } : {}),
      loops: [
        {
          start: () => {
            loop.starts++;
            loop.running = true;
          },
          stop: async () => {
            loop.running = false;
          },
        },
      ],
    });
    return { w, s, loop, mgmt };
  }

  it("retries a controller start that failed while leading, and ends with exactly one controller", async () => {
    // Retries 50 ms apart: a retry that went on after the start succeeded would come well within the wait below.
    const { w, s, loop, mgmt } = await start(2, { initialMs: 50, maxMs: 50 });
    await w.leading(20_000);
    expect(s.failed).toBe(2);
    // No further retry starts a second controller, nor does a renewal start one again: looked at after the
    // lease was renewed three times since (200 ms apart), i.e. the elector went round three more times.
    const lease = () => mgmt.list("leases")[0]?.metadata.resourceVersion;
    const seen = new Set([lease()]);
    await until(() => seen.add(lease()).size > 3, 10_000);
    expect(w.isLeader()).toBe(true);
    expect(s.listening).toBe(1);
    expect(loop.starts).toBe(1);
    await w.stop();
    expect(s.listening).toBe(0);
    expect(loop.running).toBe(false);
    expect(w.controller()).toBeUndefined();
  }, 40_000);

  it("stop() while waiting to retry a failed start ends promptly with nothing left running", async () => {
    const baseline = timers();
    // A minute to the next attempt: stop() must not wait for it.
    const { w, s, loop } = await start(Number.POSITIVE_INFINITY, { initialMs: 60_000, maxMs: 60_000 });
    await until(() => s.failed >= 1, 5_000);
    expect(w.isLeader()).toBe(true);
    expect(w.controller()).toBeUndefined();
    const t0 = Date.now();
    await w.stop();
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(s.listening).toBe(0);
    expect(loop.starts).toBe(0);
    expect(w.controller()).toBeUndefined();
    expect(timers()).toBeLessThanOrEqual(baseline);
  }, 40_000);
});
