// Faults on the bed's real node: an image the kubelet cannot pull ends the session Failed with the kubelet's
// reason in words and charges nothing; an app that starts but never answers its readiness probe fails after
// the operator's start timeout (sessions.appReadyTimeoutMs, short here) with the probe in the reason, charged
// for the seconds its container held the card; the node's kubelet and containerd restarted under a running JupyterLab
// leave it Running (the container keeps running, the same pod and address), and the usage samples before and
// after join end to start: no second lost, none charged twice. One fleet for the file; the real node goes in
// afterAll.
//
// Needs root and containerd (e2e/src/testbed/real-node/can-run.ts); skipped with its reason elsewhere.
import { HttpKube } from "@berth/controllers/kube";
import { ImageKind, resourcePath } from "@berth/crds";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import { findNodeBinaries } from "../testbed/binaries.ts";
import { kubeConfigFrom } from "../testbed/kubeconfig.ts";
import { canRunRealNode, pushFileImage } from "../testbed/real-node/index.ts";
import { podOf, REAL_PRESET, type RealFleet, startRealFleet } from "./real-fleet.ts";

vi.setConfig({ testTimeout: 300_000, hookTimeout: 900_000 });

const can = canRunRealNode();
let f: RealFleet;
const USAGE_INTERVAL_MS = 3_000;
/** Production's is 10 minutes; the JupyterLab image answers in about 10 s here. */
const APP_READY_TIMEOUT_MS = 45_000;

/** An Image resource in the management cluster's catalog, as an administrator adds one. */
async function anImage(name: string, ref: string): Promise<void> {
  const mgmt = new HttpKube(kubeConfigFrom(f.bed.fleet.cluster("mgmt").kubeconfig));
  try {
    await mgmt.json("POST", resourcePath(ImageKind), {
      body: ImageKind.build(
        { name, labels: { "app.kubernetes.io/part-of": "berth" } },
        { displayName: name, image: ref, kind: "jupyterlab", visibility: "public" },
      ),
    });
  } finally {
    mgmt.close();
  }
}

beforeAll(async () => {
  if (!can.ok) return;
  f = await startRealFleet(["jupyterlab"], {
    operatorUsageIntervalMs: USAGE_INTERVAL_MS,
    operatorAppReadyTimeoutMs: APP_READY_TIMEOUT_MS,
    nodeName: "gpu-b-real-faults",
  });
});

afterAll(async () => {
  await f?.stop();
});

async function charged(sessionId: string): Promise<bigint> {
  const rows = (await f.bed.t.database
    .db("ledger_transactions")
    .where({ session_id: sessionId, kind: "charge" })
    .select("amount")) as { amount: string }[];
  return rows.reduce((n, r) => n + BigInt(r.amount), 0n);
}

describe.skipIf(!can.ok)(
  `real sessions fail in words and survive a runtime restart${can.ok ? "" : ` (skipped: ${can.reason})`}`,
  () => {
    it("an image the kubelet cannot pull: Failed with the kubelet's reason in words, and nothing charged", async () => {
      const missing = `${f.registry.host}/sessions/never-pushed:1`;
      await anImage("never-pushed", missing);
      const alice = bedApi(f.bed, f.bed.alice);
      const created = await alice.call("createSession", {
        body: { offering: "l4", preset: REAL_PRESET, image: "never-pushed" },
      });
      const failed = await f.bed.waitFor(f.bed.alice, created.id, (s) => s.phase === "Failed", "Failed", 180_000);
      expect(failed.reason).toBe("ImagePullFailed");
      // The kubelet's words: the reference and what the registry said.
      expect(failed.message).toContain(missing);
      expect(failed.message).toMatch(/not found|failed to (pull|resolve)/i);
      const usage = await alice.call("getSessionUsage", { params: { sessionId: created.id } });
      expect(usage.totals.gpu_seconds).toBe(0);
      expect(await charged(created.id)).toBe(0n);
    });

    it("an app that starts but never answers: Failed after the start timeout, with the probe in the reason", async () => {
      // A server on 8080 where a JupyterLab's probe asks 8888: the container runs, the app never answers.
      const { ref } = await pushFileImage(f.registry.url, "bed/app", "1", {
        files: [{ path: "bed-app", content: `${findNodeBinaries()}/bed-app` }],
        entrypoint: ["/bed-app"],
        cmd: ["serve", "8080"],
      });
      await anImage("never-ready", ref);
      const alice = bedApi(f.bed, f.bed.alice);
      const created = await alice.call("createSession", {
        body: { offering: "l4", preset: REAL_PRESET, image: "never-ready" },
      });
      const cr = created.resource_name as string;
      // It runs on the real node, unready, for the timeout's length: seen running before it fails.
      await expect
        .poll(
          async () => {
            const pod = await podOf(f, cr);
            const c = pod?.status?.containerStatuses?.[0];
            return pod?.spec.nodeName === f.node.name && c?.state?.running ? c.ready : undefined;
          },
          { timeout: 120_000, interval: 500 },
        )
        .toBe(false);
      const failed = await f.bed.waitFor(f.bed.alice, created.id, (s) => s.phase === "Failed", "Failed", 180_000);
      expect(failed.reason).toBe("PodFailed");
      expect(failed.message).toBe(
        `the application did not answer its readiness probe (GET /proxy/${cr}/api on its port 8888) within ${APP_READY_TIMEOUT_MS / 1000} s of starting`,
      );
      // Its card was held from the container's start to the failure (controllers/src/mirror/usage.ts meters
      // from container start): charged exactly for those seconds at the offering's rate, nothing more.
      await expect.poll(() => podOf(f, cr), { timeout: 60_000, interval: 500 }).toBeUndefined();
      await expect
        .poll(async () => (await alice.call("getSessionUsage", { params: { sessionId: created.id } })).totals.samples, {
          timeout: 60_000,
        })
        .toBeGreaterThan(0);
      const seconds = (await alice.call("getSessionUsage", { params: { sessionId: created.id } })).totals.gpu_seconds;
      const rate = BigInt(failed.hourly_credit_rate);
      await expect
        .poll(() => charged(created.id), { timeout: 30_000 })
        .toBe((rate * BigInt(Math.round(seconds * 1000))) / 3_600_000n);
      await expect.poll(() => podOf(f, cr), { timeout: 60_000, interval: 500 }).toBeUndefined();
    });

    it("kubelet and containerd restarted under a running JupyterLab: it stays Running, and its usage neither loses nor repeats a second", async () => {
      const s = await f.bed.startRunning(
        f.bed.alice,
        { offering: "l4", preset: REAL_PRESET, image: f.images.jupyterlab?.name },
        180_000,
      );
      const before = await podOf(f, s.resource_name);
      expect(before.spec.nodeName).toBe(f.node.name);
      const alice = bedApi(f.bed, f.bed.alice);
      const usageOf = () => alice.call("getSessionUsage", { params: { sessionId: s.id } });
      await expect.poll(async () => (await usageOf()).totals.samples, { timeout: 60_000 }).toBeGreaterThanOrEqual(2);
      const samplesBefore = (await usageOf()).totals.samples;

      await f.node.restartRuntime();

      const after = await podOf(f, s.resource_name);
      expect(after.metadata.uid).toBe(before.metadata.uid);
      expect(after.status.podIP).toBe(before.status.podIP);
      expect(after.status.containerStatuses[0].restartCount).toBe(0);
      expect(after.status.containerStatuses[0].containerID).toBe(before.status.containerStatuses[0].containerID);
      const direct = await fetch(`http://${after.status.podIP}:8888/proxy/${s.resource_name}/api`);
      expect(direct.status).toBe(200);
      // Two more samples after the restart, then the series is read whole.
      await expect
        .poll(async () => (await usageOf()).totals.samples, { timeout: 60_000 })
        .toBeGreaterThanOrEqual(samplesBefore + 2);
      expect((await alice.call("getSession", { params: { sessionId: s.id } })).phase).toBe("Running");
      const usage = await usageOf();
      const series = usage.series;
      for (let i = 1; i < series.length; i++) expect(series[i]?.start).toBe(series[i - 1]?.end);
      const span = (Date.parse(series.at(-1)?.end as string) - Date.parse(series[0]?.start as string)) / 1000;
      const sum = series.reduce((n, x) => n + x.gpu_seconds, 0);
      // One GPU: the seconds charged are the seconds covered, to the millisecond.
      expect(sum).toBeCloseTo(span, 2);
      expect(usage.totals.gpu_seconds).toBeCloseTo(span, 2);
    });
  },
);
