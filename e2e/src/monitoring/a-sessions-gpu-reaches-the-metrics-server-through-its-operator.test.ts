// Journey on the whole fleet: Alice's H100 session runs; the GPU cluster's exporter reports her pod's card;
// the cluster's operator scrapes it and forwards through the internal plane with its own token; the API
// stamps it and the metrics server stores it under the cluster's id. Alice's session panel shows the load
// the test drives; Bob, in the same organization, sees none of it (404 on her session, nothing on the
// fleet panel); the operator's own metrics arrive too.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi, refusalOf } from "../api-client.ts";
import { type SessionsBed, startSessionsBed } from "../sessions/harness.ts";
import { type RunningGpuExporter, startGpuExporter } from "../testbed/gpu-exporter.ts";
import { type RunningMetricsServer, startMetricsServer } from "../testbed/metrics-server.ts";
import { until } from "../until.ts";

vi.setConfig({ testTimeout: 180_000 });

const CARD = "GPU-5b1e0c3d-0001";
let dir: string;
let vm: RunningMetricsServer;
let exporter: RunningGpuExporter;
let bed: SessionsBed;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "berth-monitoring-journey-"));
  vm = await startMetricsServer({ dir });
  exporter = await startGpuExporter({
    cards: [{ uuid: CARD, node: "gpu-node", model: "NVIDIA-H100-80GB-HBM3", memoryMiB: 81_559 }],
  });
  bed = await startSessionsBed({
    apiEnv: { BERTH_METRICS_SERVER_URL: vm.url },
    operatorGpuMetrics: { url: exporter.url, intervalMs: 1000 },
  });
}, 180_000);
afterAll(async () => {
  await bed?.stop();
  await exporter?.stop();
  await vm?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("a session's GPU in the metrics server", () => {
  it("reaches the owner's panel through the operator, labelled with the cluster, and nobody else's", async () => {
    const { alice, bob } = bed;
    const running = await bed.startRunning(alice, {
      offering: "h100",
      preset: "gpu-small",
      image: "jupyterlab",
      name: "watched",
    });
    const id = running.id as string;
    const ref = { pod: running.resource_name, namespace: "berth-sessions", container: "lab", uuid: CARD };

    const latest = async () => {
      const r = await bedApi(bed, alice).call("getMonitoringPanel", {
        params: { panelId: "session.gpu_utilization" },
        query: { session: id, range: "15m" },
      });
      return r.series[0]?.values.filter((v) => v !== null).at(-1);
    };
    for (const util of [64, 18]) {
      exporter.setContainer(ref, { util, memUsedMiB: 4096 });
      exporter.setCard(CARD, { util, memUsedMiB: 4096 });
      await until(`the panel shows ${util} %`, async () => (await latest()) === util, 60_000);
    }

    // Stored under the cluster the operator's token names, with the session's labels.
    const admin = bedApi(bed, bed.superAdmin);
    const raw = await admin.call("queryMonitoring", {
      body: { query: `DCGM_FI_DEV_GPU_UTIL{berth_session="${id}"}`, range: "15m" },
    });
    expect(raw.series[0]?.labels).toMatchObject({
      berth_cluster: running.cluster_id,
      berth_owner: alice.id,
      UUID: CARD,
    });
    // The operator's own figures came with the forwards.
    const own = await admin.call("queryMonitoring", {
      body: { query: 'berth_operator_leader{job="berth-operator"}', range: "15m" },
    });
    expect(own.series.map((s) => s.labels.berth_cluster)).toContain(running.cluster_id);

    // Bob, a member of the same organization: not her session, and none of her series on a fleet panel.
    const bobs = await refusalOf(
      bedApi(bed, bob).call("getMonitoringPanel", {
        params: { panelId: "session.gpu_utilization" },
        query: { session: id, range: "15m" },
      }),
    );
    expect(bobs.status).toBe(404);
    const fleet = await bedApi(bed, bob).call("getMonitoringPanel", {
      params: { panelId: "fleet.gpu_utilization" },
      query: { range: "15m" },
    });
    expect(fleet.series).toEqual([]);
    await bedApi(bed, alice).call("terminateSession", { params: { sessionId: id } });
  });
});
