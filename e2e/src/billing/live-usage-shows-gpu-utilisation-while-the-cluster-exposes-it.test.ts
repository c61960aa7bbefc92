// biome-ignore-all lint/suspicious/noExplicitAny: journeys read the API's JSON as it comes
// Journey on the whole fleet: the GPU clusters expose per-pod GPU metrics through a DCGM exporter (a
// stand-in on loopback, speaking its Prometheus text with its labels). Alice's session runs on two GPUs;
// her live usage shows their mean utilisation and the memory they hold, averaged over each sample's span.
// The exporter goes down: samples keep coming, billed as before, with no utilisation or memory (unknown,
// not zero).

import { type StubDcgmExporter, startStubDcgmExporter } from "@berth/operator/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { answered, bedApi, outcomeOf } from "../api-client.ts";
import { SESSIONS_NS, type SessionsBed, startSessionsBed } from "../sessions/harness.ts";
import { until } from "../until.ts";

vi.setConfig({ testTimeout: 240_000 });

const INTERVAL_MS = 2_000;
const SCRAPE_MS = 250;
let bed: SessionsBed;
let exporter: StubDcgmExporter;
beforeAll(async () => {
  exporter = await startStubDcgmExporter();
  bed = await startSessionsBed({
    operatorUsageIntervalMs: INTERVAL_MS,
    operatorGpuMetrics: { url: exporter.url, intervalMs: SCRAPE_MS },
  });
});
afterAll(async () => {
  await bed?.stop();
  await exporter?.close();
});

interface Sample {
  start: number;
  end: number;
  gpu_seconds: number;
  gpu_utilization: number | null;
  gpu_memory_mib: number | null;
}

describe("live usage with GPU metrics", () => {
  it("shows the pod's GPU utilisation and memory while the exporter answers, and GPU seconds alone once it is down", async () => {
    const { t, alice } = bed;
    const db = t.database.db;
    const created = await answered(bed, alice, (api) =>
      api.call("createSession", {
        body: { offering: "h100", preset: "gpu-small", image: "jupyterlab", name: "watched" },
      }),
    );
    expect(created.status).toBe(201);
    const id = created.body.id;
    const running = await bed.waitFor(alice, id, (s) => s.phase === "Running", "Running", 120_000);
    const samples = async (): Promise<Sample[]> =>
      (
        await db("usage_samples")
          .where({ session: id })
          .orderBy("period_start")
          .select("period_start", "period_end", "gpu_seconds", "gpu_utilization", "gpu_memory_mib")
      ).map((r: any) => ({
        start: new Date(r.period_start).getTime(),
        end: new Date(r.period_end).getTime(),
        gpu_seconds: Number(r.gpu_seconds),
        gpu_utilization: r.gpu_utilization === null ? null : Number(r.gpu_utilization),
        gpu_memory_mib: r.gpu_memory_mib,
      }));

    // Her pod holds two GPUs on the node the exporter watches; a third is another pod's.
    const mine = { namespace: SESSIONS_NS, name: running.resource_name as string };
    exporter.setGpus([
      { pod: mine, utilization: 80, memoryMib: 30_000 },
      { pod: mine, utilization: 20, memoryMib: 10_000 },
      { pod: { namespace: SESSIONS_NS, name: "someone-else" }, utilization: 100, memoryMib: 70_000 },
    ]);
    const shownFrom = Date.now();
    try {
      // Every span wholly after the exporter showed her GPUs: mean utilisation 50 %, 40,000 MiB together.
      await until(
        "two samples with GPU metrics",
        async () => (await samples()).filter((s) => s.start >= shownFrom).length >= 2,
        30_000,
      );
      for (const s of (await samples()).filter((x) => x.start >= shownFrom)) {
        expect(s.gpu_utilization).toBe(50);
        expect(s.gpu_memory_mib).toBe(40_000);
      }
      const live = await until(
        "live usage with GPU metrics",
        async () => {
          const u = await outcomeOf(bedApi(bed, alice).call("getSessionUsage", { params: { sessionId: id } }));
          return u.ok && typeof u.body.latest?.gpu_utilization === "number" ? u.body : undefined;
        },
        10_000,
      );
      expect(live.latest).toMatchObject({ gpu_utilization: 50, gpu_memory_mib: 40_000 });
      expect(live.series.some((p) => p.gpu_utilization === 50)).toBe(true);

      // The exporter goes away: metering does not wait for it, and the figures are absent, not zero.
      await exporter.close();
      const downFrom = Date.now() + SCRAPE_MS; // a scrape already under way may still land
      await until(
        "two samples after the exporter went down",
        async () => (await samples()).filter((s) => s.start >= downFrom).length >= 2,
        30_000,
      );
      const all = await samples();
      for (const s of all.filter((x) => x.start >= downFrom)) {
        expect(s.gpu_utilization).toBeNull();
        expect(s.gpu_memory_mib).toBeNull();
        expect(s.gpu_seconds).toBeCloseTo((s.end - s.start) / 1000, 3);
      }
      for (let i = 1; i < all.length; i++) expect(all[i]?.start).toBe(all[i - 1]?.end);
      const after = await bedApi(bed, alice).call("getSessionUsage", { params: { sessionId: id } });
      expect(after.latest).toMatchObject({ gpu_utilization: null, gpu_memory_mib: null });
      expect(after.latest?.gpu_seconds).toBeGreaterThan(0);
    } finally {
      await bedApi(bed, alice).call("terminateSession", { params: { sessionId: id } });
    }
  });
});
