// The operator's signals: each running session pod's GPU utilisation (HAMi's per-container figure over
// DCGM's per card, read by the real scraper from the bed's GPU exporter) and its notebook server's kernels
// and terminals (the stand-in serves Jupyter Server's shapes), in one report per round.
import type { KubeApi } from "@berth/controllers/kube";
import { type RunningGpuExporter, startGpuExporter } from "@berth/e2e/gpu-exporter";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DcgmScraper } from "../gpu/dcgm.ts";
import { type RunningStandin, startStandin } from "../standin/standin.ts";
import { ActivityProber, probeNotebook } from "./prober.ts";

const pod = (name: string, kind: string, phase = "Running") => ({
  metadata: {
    name,
    namespace: "berth-sessions",
    labels: {
      "berth.dev/session": name,
      "berth.dev/session-id": name.replace("-", "_"),
      "app.kubernetes.io/component": kind,
    },
  },
  status: { phase },
});
// The pod list is the one thing read from Kubernetes here; the list route's shape, nothing more.
const kube = (items: unknown[]) =>
  ({ request: async () => ({ status: 200, body: { items }, headers: {} }) }) as unknown as KubeApi;

let standin: RunningStandin;
let gpus: RunningGpuExporter;
let scraper: DcgmScraper;
beforeAll(async () => {
  standin = await startStandin();
  gpus = await startGpuExporter({
    cards: [
      { uuid: "GPU-aaaa", node: "gpu-a-1", model: "H100 80GB HBM3", memoryMiB: 81_559 },
      { uuid: "GPU-bbbb", node: "gpu-a-1", model: "H100 80GB HBM3", memoryMiB: 81_559 },
    ],
  });
  scraper = new DcgmScraper({
    urls: [gpus.url],
    intervalMs: 60_000,
    timeoutMs: 2_000,
    retentionMs: 600_000,
    now: () => Date.now(),
  });
});
afterAll(async () => {
  await scraper?.stop();
  await gpus?.stop();
  await standin?.close();
});

describe("the notebook probe", () => {
  it("reads busy kernels and the latest kernel or terminal activity, and says so when the server does not answer", async () => {
    standin.setNotebook("ses-1", {
      kernels: [
        { id: "k1", execution_state: "idle", last_activity: "2026-11-26T09:00:00.000Z" },
        { id: "k2", execution_state: "busy", last_activity: "2026-11-26T09:10:00.000Z" },
      ],
      terminals: [{ name: "1", last_activity: "2026-11-26T09:20:00.000Z" }],
    });
    expect(await probeNotebook(`${standin.url}/proxy/ses-1`, 1000)).toEqual({
      state: "ok",
      busy: true,
      last_activity: "2026-11-26T09:20:00.000Z",
    });
    standin.failNotebook("ses-1", true);
    expect((await probeNotebook(`${standin.url}/proxy/ses-1`, 1000)).state).toBe("unreachable");
    standin.failNotebook("ses-1", false);
    expect((await probeNotebook("http://127.0.0.1:1/proxy/ses-1", 1000)).state).toBe("unreachable");
  });
});

describe("a round of the prober", () => {
  it("reports each running pod's GPU figure (the container's on a shared card) and notebook, as one operator report", async () => {
    // ses-1 and ses-2 share card A (1/2 slices): the card is busy because of ses-2 alone.
    gpus.setCard("GPU-aaaa", { util: 80, memUsedMiB: 30_000 });
    gpus.setContainer(
      { pod: "ses-1", namespace: "berth-sessions", container: "main", uuid: "GPU-aaaa" },
      { util: 0, memUsedMiB: 2_000 },
    );
    gpus.setContainer(
      { pod: "ses-2", namespace: "berth-sessions", container: "main", uuid: "GPU-aaaa" },
      { util: 80, memUsedMiB: 28_000 },
    );
    gpus.setCard("GPU-bbbb", { util: 3, memUsedMiB: 500 });
    gpus.setContainer(
      { pod: "ses-3", namespace: "berth-sessions", container: "main", uuid: "GPU-bbbb" },
      { util: 3, memUsedMiB: 500 },
    );
    await scraper.scrape();
    // Without the sharing layer's monitor, a pod's figure is its card's: ses-1 would look busy.
    const dcgmOnly = new DcgmScraper({
      urls: [gpus.url.replace("/metrics", "/dcgm/metrics")],
      intervalMs: 60_000,
      timeoutMs: 2_000,
      retentionMs: 600_000,
      now: () => Date.now(),
    });
    await dcgmOnly.scrape();
    expect(dcgmOnly.readings.latest({ namespace: "berth-sessions", name: "ses-1" }, 0)).toBe(80);
    const hamiBeside = new DcgmScraper({
      urls: [gpus.url.replace("/metrics", "/dcgm/metrics"), gpus.url.replace("/metrics", "/hami/metrics")],
      intervalMs: 60_000,
      timeoutMs: 2_000,
      retentionMs: 600_000,
      now: () => Date.now(),
    });
    await hamiBeside.scrape();
    expect(hamiBeside.readings.latest({ namespace: "berth-sessions", name: "ses-1" }, 0)).toBe(0);
    standin.setNotebook("ses-1", {
      kernels: [{ id: "k", execution_state: "idle", last_activity: "2026-11-26T09:00:00.000Z" }],
      terminals: [],
    });
    standin.setNotebook("ses-2", {
      kernels: [{ id: "k", execution_state: "busy", last_activity: "2026-11-26T09:30:00.000Z" }],
      terminals: [],
    });
    const sent: unknown[] = [];
    const prober = new ActivityProber({
      kube: kube([
        pod("ses-1", "jupyterlab"),
        pod("ses-2", "jupyterlab"),
        pod("ses-3", "terminal"),
        pod("ses-4", "jupyterlab", "Pending"),
      ]),
      client: {
        call: async (_m, _p, body) => {
          sent.push(body);
          return { ok: true as const, status: 200, body: {} };
        },
      },
      clusterId: "clu_a",
      namespace: "berth-sessions",
      upstream: () => ({ host: "127.0.0.1", port: standin.port }),
      gpu: (p) => scraper.readings.latest(p, Date.now() - 60_000),
      clock: { now: () => Date.parse("2026-11-26T09:31:00Z") },
    });
    await prober.probe();
    expect(sent).toEqual([
      {
        cluster_id: "clu_a",
        source: "operator",
        observed_at: "2026-11-26T09:31:00.000Z",
        sessions: [
          {
            session: "ses_1",
            gpu_utilization: 0,
            notebook: { state: "ok", busy: false, last_activity: "2026-11-26T09:00:00.000Z" },
          },
          {
            session: "ses_2",
            gpu_utilization: 80,
            notebook: { state: "ok", busy: true, last_activity: "2026-11-26T09:30:00.000Z" },
          },
          { session: "ses_3", gpu_utilization: 3, notebook: { state: "none", busy: false, last_activity: null } },
        ],
      },
    ]);
  });

  it("sends no GPU figure when the exporter stopped answering (the control plane then holds the idle rule)", async () => {
    await gpus.stop();
    const later = new DcgmScraper({
      urls: [gpus.url],
      intervalMs: 60_000,
      timeoutMs: 500,
      retentionMs: 600_000,
      now: () => Date.now(),
    });
    await later.scrape();
    expect(later.readings.latest({ namespace: "berth-sessions", name: "ses-1" }, 0)).toBeUndefined();
  });
});
