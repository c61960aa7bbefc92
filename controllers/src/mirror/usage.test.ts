import { describe, expect, it } from "vitest";
import {
  dueSamples,
  type MeteredPodView,
  type PodRun,
  podRun,
  UsageMeter,
  UsageRefused,
  type UsageSample,
  withGpuUsage,
} from "./usage.ts";

const LABEL = "berth.dev/session-id";
const T0 = Date.parse("2026-11-22T10:00:00Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const opts = { intervalMs: 60_000, graceMs: 2_000, limit: 1000 };

function pod(over: {
  uid?: string;
  gpus?: number;
  running?: string;
  lastStart?: string;
  deletion?: string;
  grace?: number;
  phase?: string;
  finished?: string;
}): MeteredPodView {
  return {
    metadata: {
      name: "ses-a",
      uid: over.uid ?? "u1",
      labels: { [LABEL]: "ses_a" },
      ...(over.deletion ? { deletionTimestamp: over.deletion, deletionGracePeriodSeconds: over.grace ?? 30 } : {}),
    } as MeteredPodView["metadata"],
    spec: { containers: [{ name: "main", resources: { limits: { "nvidia.com/gpu": String(over.gpus ?? 2) } } }] },
    status: {
      phase: over.phase ?? "Running",
      containerStatuses: [
        {
          name: "main",
          state: over.finished
            ? { terminated: { startedAt: over.running ?? at(0), finishedAt: over.finished } }
            : over.running
              ? { running: { startedAt: over.running } }
              : {},
          ...(over.lastStart ? { lastState: { terminated: { startedAt: over.lastStart } } } : {}),
        },
      ],
    },
  };
}

describe("podRun", () => {
  it("reads GPUs, start and the deletion request (deletionTimestamp minus grace)", () => {
    expect(podRun(pod({ running: at(5), deletion: at(100), grace: 30 }), LABEL)).toEqual({
      uid: "u1",
      session: "ses_a",
      name: "ses-a",
      gpus: 2,
      startMs: T0 + 5000,
      endMs: T0 + 70_000,
    });
  });
  it("keeps the earlier start of a restarted container, and has no start while pending", () => {
    expect(podRun(pod({ running: at(50), lastStart: at(10) }), LABEL)?.startMs).toBe(T0 + 10_000);
    expect(podRun(pod({}), LABEL)?.startMs).toBeUndefined();
  });
  it("ends a pod that finished on its own at its last finish", () => {
    expect(podRun(pod({ phase: "Failed", running: at(0), finished: at(42) }), LABEL)?.endMs).toBe(T0 + 42_000);
    // Deleted later (a new leader's relist sees both): it held its GPU until it finished, not until then.
    const late = pod({ phase: "Failed", running: at(0), finished: at(42), deletion: at(600), grace: 30 });
    expect(podRun(late, LABEL)?.endMs).toBe(T0 + 42_000);
  });
  it("ignores pods that are not a session's", () => {
    const p = pod({ running: at(0) });
    p.metadata.labels = {};
    expect(podRun(p, LABEL)).toBeUndefined();
  });
});

describe("dueSamples", () => {
  const run: PodRun = { uid: "u1", session: "ses_a", gpus: 2, startMs: T0 + 30_000 };

  it("sends closed intervals only after the grace, the first one partial", () => {
    expect(dueSamples(run, undefined, T0 + 61_000, opts).samples).toEqual([]);
    const due = dueSamples(run, undefined, T0 + 62_000, opts);
    expect(due.samples).toEqual([
      { id: `u1:60:${T0 / 1000}`, session: "ses_a", start: at(30), end: at(60), gpu_seconds: 60 },
    ]);
    expect(due).toMatchObject({ nextMs: T0 + 60_000, complete: false });
  });

  it("sends the last, partial interval as soon as the end is known, and is then complete", () => {
    const due = dueSamples({ ...run, endMs: T0 + 150_500 }, T0 + 60_000, T0 + 151_000, opts);
    expect(due.samples.map((s) => [s.start, s.end, s.gpu_seconds])).toEqual([
      [at(60), at(120), 120],
      [at(120), at(150.5), 61],
    ]);
    expect(due.complete).toBe(true);
  });

  it("covers every millisecond of a run exactly once, whatever the moments it is asked", () => {
    const ended = { ...run, startMs: T0 + 1234, endMs: T0 + 7 * 60_000 + 789 };
    const all: UsageSample[] = [];
    let from: number | undefined;
    for (let now = T0; ; now += 17_321) {
      const due = dueSamples(ended, from, Math.min(now, ended.endMs + 1), { ...opts, limit: 2 });
      all.push(...due.samples);
      from = due.nextMs;
      if (due.complete) break;
    }
    const ms = all.reduce((n, s) => n + Date.parse(s.end) - Date.parse(s.start), 0);
    expect(ms).toBe(ended.endMs - ended.startMs);
    expect(new Set(all.map((s) => s.id)).size).toBe(all.length);
    for (let i = 1; i < all.length; i++) expect(all[i]?.start).toBe(all[i - 1]?.end);
  });

  it("charges nothing for a pod deleted before it ran", () => {
    expect(dueSamples({ ...run, endMs: T0 + 10_000 }, undefined, T0 + 99_000, opts)).toMatchObject({
      samples: [],
      complete: true,
    });
    expect(dueSamples({ uid: "u", session: "s", gpus: 1, endMs: T0 }, undefined, T0, opts).complete).toBe(true);
  });
});

describe("UsageMeter", () => {
  function meter(send: (s: UsageSample[]) => Promise<void>) {
    let now = T0;
    const m = new UsageMeter({
      options: { intervalMs: 1000, graceMs: 0, batch: 3 },
      send,
      now: () => now,
      onError: () => {},
    });
    return { m, advance: (ms: number) => (now += ms), now: () => now };
  }

  it("keeps what was not acknowledged and sends it again, then forgets a finished pod", async () => {
    const sent: UsageSample[][] = [];
    let fail = true;
    const { m, advance } = meter(async (s) => {
      if (fail) throw new Error("control plane away");
      sent.push(s);
    });
    advance(2500);
    m.observe({ uid: "u1", session: "ses_a", gpus: 1, startMs: T0 });
    m.observe({ uid: "u1", session: "ses_a", gpus: 1, startMs: T0, endMs: T0 + 2500 }, true);
    await new Promise((r) => setTimeout(r, 20));
    expect(m.counts.failedBatches).toBeGreaterThan(0);
    fail = false;
    await m.idle();
    const flat = sent.flat();
    expect(flat.map((s) => s.gpu_seconds)).toEqual([1, 1, 0.5]);
    expect(m.tracked).toBe(0);
    await m.stop();
  });

  it("drops samples of sessions the control plane refuses for good, and still sends the others", async () => {
    const sent: UsageSample[] = [];
    const { m } = meter(async (s) => {
      if (s.some((x) => x.session === "ses_x")) throw new UsageRefused("not on this cluster", ["ses_x"]);
      sent.push(...s);
    });
    m.observe({ uid: "u1", session: "ses_a", gpus: 1, startMs: T0 - 1000, endMs: T0 }, true);
    m.observe({ uid: "u2", session: "ses_x", gpus: 1, startMs: T0 - 1000, endMs: T0 }, true);
    await m.idle();
    expect(sent.map((s) => s.session)).toEqual(["ses_a"]);
    expect(m.counts.dropped).toBe(1);
    await m.stop();
  });

  it("adds the pod's GPU utilisation and memory over each sample's own span, when the source saw any", async () => {
    const sent: UsageSample[] = [];
    const asked: [string, number, number][] = [];
    const m = new UsageMeter({
      options: { intervalMs: 1000, graceMs: 0, batch: 10 },
      send: async (s) => void sent.push(...s),
      now: () => T0 + 2500, // two closed intervals
      onError: () => {},
      gpu: {
        usage: (p, from, to) => {
          asked.push([`${p.namespace}/${p.name}`, from - T0, to - T0]);
          // Seen in the first second only; the second had no reading; 100.0004 % is a rounding artefact.
          return from < T0 + 1000 ? { utilization: 100.0004, memoryMib: 4095.6 } : undefined;
        },
      },
    });
    m.observe({ uid: "u1", session: "ses_a", namespace: "berth-sessions", name: "ses-a", gpus: 1, startMs: T0 });
    m.observe({ uid: "u2", session: "ses_b", gpus: 1, startMs: T0 }); // no pod name known: nothing to ask
    await m.idle();
    const a = sent.filter((s) => s.session === "ses_a");
    expect(a.map((s) => [s.gpu_utilization, s.gpu_memory_mib])).toEqual([
      [100, 4096],
      [undefined, undefined],
    ]);
    expect(a.every((s) => s.gpu_seconds === 1)).toBe(true);
    expect(sent.filter((s) => s.session === "ses_b").every((s) => !("gpu_utilization" in s))).toBe(true);
    expect(asked).toEqual([
      ["berth-sessions/ses-a", 0, 1000],
      ["berth-sessions/ses-a", 1000, 2000],
    ]);
    await m.stop();
  });

  it("holds an exporter's impossible memory reading to what the control plane stores", () => {
    const run: PodRun = { uid: "u1", session: "ses_a", namespace: "n", name: "p", gpus: 1, startMs: T0 };
    const sample = { id: "x", session: "ses_a", start: at(0), end: at(1), gpu_seconds: 1 } as UsageSample;
    const out = withGpuUsage(sample, run, { usage: () => ({ memoryMib: 2 ** 40 }) });
    expect(out.gpu_memory_mib).toBe(2_147_483_647);
  });

  it("sends GPU seconds alone without a GPU metrics source (no zeros standing in for unknown figures)", () => {
    const s = { id: "x", session: "ses_a", start: at(0), end: at(1), gpu_seconds: 1 };
    const run: PodRun = { uid: "u1", session: "ses_a", namespace: "ns", name: "p", gpus: 1 };
    expect(withGpuUsage(s, run, undefined)).toEqual(s);
    expect(withGpuUsage(s, run, { usage: () => undefined })).toEqual(s);
    expect(withGpuUsage(s, run, { usage: () => ({ memoryMib: 10 }) })).toEqual({ ...s, gpu_memory_mib: 10 });
  });

  it("refuses an interval that is not whole seconds", () => {
    expect(
      () =>
        new UsageMeter({
          options: { intervalMs: 1500, graceMs: 0, batch: 1 },
          send: async () => {},
          now: Date.now,
          onError: () => {},
        }),
    ).toThrow(/whole number of seconds/);
  });
});
