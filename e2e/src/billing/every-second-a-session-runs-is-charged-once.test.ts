// biome-ignore-all lint/suspicious/noExplicitAny: journeys read the API's JSON as it comes
// Journey on the whole fleet, nothing posted by hand: Alice's H100 session runs; the GPU cluster's
// operator meters its pod and sends usage samples; its operator is replaced mid-run (the new leader
// resends what it cannot know was acknowledged); she pauses, resumes and terminates it. Every
// millisecond her pods ran — from the container's start to the moment the pause or termination was
// asked for — is in exactly one sample, every sample is charged exactly once, and nothing is charged
// while the session is paused.

import { checkLedgerInvariants } from "@berth/api/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { answered, bedApi } from "../api-client.ts";
import { adminKube, SESSIONS_NS, type SessionsBed, startSessionsBed } from "../sessions/harness.ts";
import { until } from "../until.ts";

vi.setConfig({ testTimeout: 240_000 });

const INTERVAL_MS = 2_000;
let bed: SessionsBed;
beforeAll(async () => {
  bed = await startSessionsBed({ operatorUsageIntervalMs: INTERVAL_MS });
});
afterAll(async () => {
  await bed?.stop();
});

const h100 = { offering: "h100", preset: "gpu-small", image: "jupyterlab", name: "metered" };
// h100 with one GPU: 4 credits (4,000,000 units) an hour.
const PER_HOUR = 4_000_000n;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Sample {
  sample_id: string;
  start: number;
  end: number;
  gpu_seconds: number;
  billed: boolean;
}

describe("metering a running session", () => {
  it("charges every second its pods ran exactly once, across an operator restart, a pause and a resume", async () => {
    const { t, alice } = bed;
    const db = t.database.db;
    const created = await answered(bed, alice, (api) => api.call("createSession", { body: h100 }));
    expect(created.status).toBe(201);
    const id = created.body.id;
    const running = await bed.waitFor(alice, id, (s) => s.phase === "Running", "Running", 120_000);
    const handle = Object.values(bed.gpu).find((g) => g.id === running.cluster_id) as (typeof bed.gpu)[string];
    const kube = adminKube(handle.cluster);
    const podOf = async () =>
      (await kube.json<any>("GET", `/api/v1/namespaces/${SESSIONS_NS}/pods/${running.resource_name}`)) as any;
    // Where metering ends for the pod read now: its deletion's time less the grace, watched from this read
    // until the pod is gone (each deletion it shows: a second, shorter delete moves the time).
    const podStops = async (): Promise<{ stops: Promise<Set<number>> }> => {
      const pod = await podOf();
      const seen = new Set<number>();
      const stops = kube
        .watchUntil<any>(
          `/api/v1/namespaces/${SESSIONS_NS}/pods?fieldSelector=metadata.name%3D${running.resource_name}`,
          pod.metadata.resourceVersion,
          ({ type, object: { metadata: m } }) => {
            if (m.uid !== pod.metadata.uid) return false;
            if (m.deletionTimestamp)
              seen.add(Date.parse(m.deletionTimestamp) - Number(m.deletionGracePeriodSeconds ?? 0) * 1000);
            return type === "DELETED";
          },
          120_000,
        )
        .then(() => seen);
      stops.catch(() => {}); // awaited below; a test failing first must not leave it unhandled
      return { stops };
    };

    // Bob's session beside hers on the same cluster, metered by the same operator: its samples show the
    // meter's rounds going on while hers is paused.
    const witness = await bed.startRunning(bed.bob, { ...h100, name: "witness" });
    expect(witness.cluster_id).toBe(running.cluster_id);
    const samples = async (session = id): Promise<Sample[]> =>
      (
        await db("usage_samples")
          .where({ session })
          .orderBy("period_start")
          .select("sample_id", "period_start", "period_end", "gpu_seconds", "billed_at")
      ).map((r: any) => ({
        sample_id: r.sample_id,
        start: new Date(r.period_start).getTime(),
        end: new Date(r.period_end).getTime(),
        gpu_seconds: Number(r.gpu_seconds),
        billed: r.billed_at !== null,
      }));

    try {
      // First run: the pod's container start is where metering begins.
      const pod1 = await podOf();
      const started1 = Date.parse(pod1.status.containerStatuses[0].state.running.startedAt);
      await until("the first closed interval", async () => (await samples()).length >= 1, 30_000);

      // The operator is replaced: the new leader meters the same pod again from its start; what the old
      // one sent comes again with the same ids and is dropped.
      await handle.operator?.stop();
      await handle.startOperator();
      const before = (await samples()).length;
      await until("samples from the new leader", async () => (await samples()).length > before, 30_000);

      const watch1 = await podStops();
      const paused = await answered(bed, alice, (api) => api.call("pauseSession", { params: { sessionId: id } }));
      expect(paused.status).toBe(202);
      await bed.waitFor(alice, id, (s) => s.phase === "Paused", "Paused", 60_000);
      const stops = await watch1.stops;
      // The last, partial interval arrives as soon as the operator sees the deletion. A regular interval may
      // end between the pause and the deletion and arrive first: the run is whole once a sample ends at a stop.
      const firstRun = await until(
        "the first run's last sample",
        async () => {
          const s = (await samples()).filter((x) => x.sample_id.startsWith(pod1.metadata.uid));
          return stops.has(s.at(-1)?.end ?? -1) ? s : undefined;
        },
        30_000,
      );
      expect(firstRun[0]?.start).toBe(started1);

      // Paused: nothing more arrives for the session while the meter closes three more intervals (Bob's
      // samples ending after this point, sent in the same rounds as hers would be).
      const whilePaused = (await samples()).length;
      const quietFrom = Date.now();
      await until(
        "three more rounds of the meter",
        async () => (await samples(witness.id)).filter((x) => x.end > quietFrom).length >= 3,
        30_000,
      );
      expect((await samples()).length).toBe(whilePaused);

      // Second run, then termination.
      const resumed = await answered(bed, alice, (api) => api.call("resumeSession", { params: { sessionId: id } }));
      expect(resumed.status).toBe(202);
      await bed.waitFor(alice, id, (s) => s.phase === "Running", "Running again", 120_000);
      const pod2 = await podOf();
      expect(pod2.metadata.uid).not.toBe(pod1.metadata.uid);
      const started2 = Date.parse(pod2.status.containerStatuses[0].state.running.startedAt);
      // A run-duration, not a wait for an event: the second run spans more than one interval.
      await sleep(INTERVAL_MS + 500);
      const watch2 = await podStops();
      const terminated = await answered(bed, alice, (api) =>
        api.call("terminateSession", { params: { sessionId: id } }),
      );
      expect(terminated.status).toBe(202);
      await bed.waitFor(alice, id, (s) => s.phase === "Terminated", "Terminated", 60_000);
      const stopped = await watch2.stops;
      const secondRun = await until(
        "the second run's last sample, billed",
        async () => {
          const all = await samples();
          const s = all.filter((x) => x.sample_id.startsWith(pod2.metadata.uid));
          return stopped.has(s.at(-1)?.end ?? -1) && all.every((x) => x.billed) ? s : undefined;
        },
        30_000,
      );
      expect(secondRun[0]?.start).toBe(started2);

      // Each run is covered without a gap or an overlap, at one GPU.
      for (const run of [firstRun, secondRun]) {
        for (let i = 1; i < run.length; i++) expect(run[i]?.start).toBe(run[i - 1]?.end);
        for (const s of run) expect(s.gpu_seconds).toBeCloseTo((s.end - s.start) / 1000, 3);
      }
      const all = await samples();
      expect(all.length).toBe(firstRun.length + secondRun.length);
      const ranMs =
        (firstRun.at(-1)?.end ?? 0) -
        (firstRun[0]?.start ?? 0) +
        ((secondRun.at(-1)?.end ?? 0) - (secondRun[0]?.start ?? 0));
      expect(ranMs).toBeGreaterThan(INTERVAL_MS);

      // One charge per sample, and together exactly the cost of the time run (the remainder below one
      // unit is carried, never charged twice and never lost).
      const charges = await db("ledger_transactions").where({ kind: "charge", session_id: id }).select("amount");
      expect(charges.length).toBe(all.length);
      const charged = charges.reduce((n: bigint, c: any) => n + BigInt(c.amount), 0n);
      expect(charged).toBe((PER_HOUR * BigInt(ranMs)) / 3_600_000n);
      expect(await checkLedgerInvariants(db)).toEqual([]);

      // What she sees: the live usage answers the last sample and the session's totals.
      const usage = await bedApi(bed, alice).call("getSessionUsage", { params: { sessionId: id } });
      expect(Date.parse(usage.latest?.end as string)).toBe(secondRun.at(-1)?.end);
      expect(usage.series.length).toBeGreaterThan(0);
    } finally {
      kube.close();
    }
  });
});
