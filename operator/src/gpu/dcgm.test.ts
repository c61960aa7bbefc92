import { afterEach, describe, expect, it } from "vitest";
import {
  dcgmExposition,
  type StubDcgmExporter,
  startStubDcgmExporter,
} from "../testing/stub-dcgm-exporter.test-support.ts";
import { DcgmScraper, GpuReadings, parseDcgm } from "./dcgm.ts";

const pod = (name: string, namespace = "berth-sessions") => ({ namespace, name });

describe("parseDcgm", () => {
  it("reads one figure per pod: the mean utilisation and the summed memory of its GPUs", () => {
    const text = dcgmExposition([
      { pod: pod("ses-a"), utilization: 80, memoryMib: 1000 },
      { pod: pod("ses-a"), utilization: 40, memoryMib: 3000 },
      { pod: pod("ses-b"), utilization: 0, memoryMib: 0 },
      { utilization: 99, memoryMib: 5 }, // a GPU no pod holds
    ]);
    expect(parseDcgm(text)).toEqual([
      { namespace: "berth-sessions", pod: "ses-a", utilization: 60, memoryMib: 4000 },
      { namespace: "berth-sessions", pod: "ses-b", utilization: 0, memoryMib: 0 },
    ]);
  });

  it("takes exported_pod / exported_namespace over the exporter's own pod labels when a Prometheus renamed them", () => {
    const text = dcgmExposition([{ pod: pod("ses-a"), utilization: 12.5, memoryMib: 7, exportedLabels: true }]);
    expect(parseDcgm(text)).toEqual([{ namespace: "berth-sessions", pod: "ses-a", utilization: 12.5, memoryMib: 7 }]);
  });

  it("copes with escaped label values, timestamps, odd spacing and values that are not numbers", () => {
    const text = [
      'DCGM_FI_DEV_GPU_UTIL{modelName="A \\"quoted\\" {model}",pod="p1",namespace="ns"} 30 1732270000000',
      'DCGM_FI_DEV_GPU_UTIL { pod = "p1" , namespace = "ns" }   50',
      'DCGM_FI_DEV_FB_USED{pod="p1",namespace="ns"} NaN',
      'DCGM_FI_DEV_GPU_UTIL{pod="p2",namespace="ns"} garbage',
      'DCGM_FI_DEV_GPU_UTIL{pod="p2",namespace="ns"}',
      'DCGM_FI_DEV_GPU_UTIL{pod="p2",namespace="ns"} 0x10',
      'DCGM_FI_DEV_GPU_UTIL_OTHER{pod="p3",namespace="ns"} 1',
      'DCGM_FI_DEV_GPU_UTIL{pod="p4",namespace="ns"',
    ].join("\n");
    expect(parseDcgm(text)).toEqual([{ namespace: "ns", pod: "p1", utilization: 40 }]);
  });
});

describe("GpuReadings", () => {
  it("averages a pod's readings taken in [from, to), and knows nothing outside them", () => {
    const r = new GpuReadings({ retentionMs: 60_000 });
    r.record(1000, [{ namespace: "ns", pod: "p", utilization: 10, memoryMib: 100 }]);
    r.record(2000, [{ namespace: "ns", pod: "p", utilization: 30 }]);
    r.record(3000, [{ namespace: "ns", pod: "p", utilization: 90, memoryMib: 300 }]);
    expect(r.usage(pod("p", "ns"), 1000, 3000)).toEqual({ utilization: 20, memoryMib: 100 });
    expect(r.usage(pod("p", "ns"), 0, 10_000)).toEqual({ utilization: 130 / 3, memoryMib: 200 });
    expect(r.usage(pod("p", "ns"), 4000, 5000)).toBeUndefined();
    expect(r.usage(pod("q", "ns"), 0, 10_000)).toBeUndefined();
    expect(r.usage(pod("p", "other"), 0, 10_000)).toBeUndefined();
  });

  it("forgets readings older than its retention, and pods with none left", () => {
    const r = new GpuReadings({ retentionMs: 5_000 });
    r.record(1000, [{ namespace: "ns", pod: "gone", utilization: 10 }]);
    r.record(2000, [{ namespace: "ns", pod: "p", utilization: 20 }]);
    r.record(7000, [{ namespace: "ns", pod: "p", utilization: 40 }]);
    expect(r.usage(pod("p", "ns"), 0, 10_000)).toEqual({ utilization: 30 });
    expect(r.pods).toBe(1);
    r.record(7500, []);
    expect(r.usage(pod("p", "ns"), 0, 10_000)).toEqual({ utilization: 40 });
  });
});

describe("DcgmScraper against a stand-in exporter", () => {
  let exporter: StubDcgmExporter | undefined;
  afterEach(async () => {
    await exporter?.close();
  });

  it("records what the exporter shows, and records nothing while it is down or failing", async () => {
    exporter = await startStubDcgmExporter({ gpus: [{ pod: pod("ses-a"), utilization: 70, memoryMib: 2048 }] });
    let now = 1000;
    const results: string[] = [];
    const s = new DcgmScraper({
      urls: [exporter.url],
      intervalMs: 60_000,
      timeoutMs: 10_000,
      retentionMs: 60_000,
      now: () => now,
      onScrape: (r) => results.push(r),
    });
    await s.scrape();
    now = 2000;
    exporter.failWith(503);
    await s.scrape();
    now = 3000;
    exporter.failWith(undefined);
    exporter.setGpus([{ pod: pod("ses-a"), utilization: 30, memoryMib: 1024 }]);
    await s.scrape();
    await exporter.close();
    now = 4000;
    await s.scrape();
    expect(results).toEqual(["ok", "503", "ok", "network"]);
    expect(s.usage(pod("ses-a"), 0, 5000)).toEqual({ utilization: 50, memoryMib: 1536 });
    expect(s.usage(pod("ses-a"), 1500, 2500)).toBeUndefined();
    await s.stop();
  });

  it("gives up on a scrape that takes longer than its timeout", async () => {
    const { createServer } = await import("node:http");
    const hanging = createServer(() => {});
    await new Promise<void>((r) => hanging.listen(0, "127.0.0.1", () => r()));
    const { port } = hanging.address() as { port: number };
    const results: string[] = [];
    const s = new DcgmScraper({
      urls: [`http://127.0.0.1:${port}/metrics`],
      intervalMs: 60_000,
      timeoutMs: 200,
      retentionMs: 60_000,
      now: () => 0,
      onScrape: (r) => results.push(r),
    });
    await s.scrape();
    expect(results).toEqual(["timeout"]);
    await s.stop();
    hanging.closeAllConnections();
    await new Promise((r) => hanging.close(r));
  });

  it("says a 200 without any DCGM metric is not an exporter (a wrong URL), and records nothing", async () => {
    const { createServer } = await import("node:http");
    const other = createServer((_req, res) => res.end('node_cpu_seconds_total{cpu="0"} 12\n'));
    await new Promise<void>((r) => other.listen(0, "127.0.0.1", () => r()));
    const { port } = other.address() as { port: number };
    const results: string[] = [];
    const s = new DcgmScraper({
      urls: [`http://127.0.0.1:${port}/metrics`],
      intervalMs: 60_000,
      timeoutMs: 10_000,
      retentionMs: 60_000,
      now: () => 0,
      onScrape: (r) => results.push(r),
    });
    await s.scrape();
    expect(results).toEqual(["parse"]);
    expect(s.readings.pods).toBe(0);
    await s.stop();
    other.closeAllConnections();
    await new Promise((r) => other.close(r));
  });
});
