// Journey on the whole fleet and Chromium: Alice's H100 session runs; the GPU cluster's exporter reports
// her pod's card, the cluster's operator scrapes and forwards it, the metrics server stores it. On the
// session's page the GPU utilisation and memory charts follow the load the test drives without a reload,
// read the latest value out to the keyboard and hold a table; axe on the page; a screenshot to look at.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureConsoleBuilt } from "@berth/console";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import { gpuCluster, H100, MANAGEMENT, type SessionsBed, startSessionsBed } from "../sessions/harness.ts";
import { type RunningGpuExporter, startGpuExporter } from "../testbed/gpu-exporter.ts";
import { type RunningMetricsServer, startMetricsServer } from "../testbed/metrics-server.ts";
import { closeBrowser, closeContexts, expectAccessible, launchBrowser, newContext, Screenshots } from "./browser.ts";
import { LoginPage } from "./pages/login-page.ts";
import { SessionPage } from "./pages/session-page.ts";
import { Shell } from "./pages/shell.ts";

vi.setConfig({ testTimeout: 180_000 });

const CARD = "GPU-7c2d9e41-0001";
let dir: string;
let vm: RunningMetricsServer;
let exporter: RunningGpuExporter;
let bed: SessionsBed;
let browser: Browser;
let context: BrowserContext | undefined;
let page: Page | undefined;
const shots = new Screenshots("member-watches-their-sessions-gpu-on-its-page");

beforeAll(async () => {
  ensureConsoleBuilt();
  dir = mkdtempSync(join(tmpdir(), "berth-session-gpu-journey-"));
  vm = await startMetricsServer({ dir });
  exporter = await startGpuExporter({ cards: [{ uuid: CARD, node: "gpu-a-1", model: H100, memoryMiB: 81_559 }] });
  bed = await startSessionsBed({
    fleet: {
      clusters: [MANAGEMENT, gpuCluster("gpu-a", [{ name: "gpu-a-1", gpuModel: H100, gpuCount: 2 }])],
    },
    apiEnv: { BERTH_METRICS_SERVER_URL: vm.url },
    operatorGpuMetrics: { url: exporter.url, intervalMs: 1000 },
  });
  browser = await launchBrowser();
}, 180_000);
afterEach(async (ctx) => shots.onFailure(page, ctx));
afterAll(async () => {
  await closeContexts([context]);
  await closeBrowser(browser);
  await bed?.stop();
  await exporter?.stop();
  await vm?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("a session's page", () => {
  it("charts the session's GPU live, from its cluster's exporter through the operator", async () => {
    const { alice } = bed;
    const running = await bed.startRunning(alice, {
      offering: "h100",
      preset: "gpu-small",
      image: "jupyterlab",
      name: "watched-on-its-page",
    });
    const id = running.id as string;
    const ref = { pod: running.resource_name, namespace: "berth-sessions", container: "lab", uuid: CARD };
    exporter.setContainer(ref, { util: 41, memUsedMiB: 12_288 });
    exporter.setCard(CARD, { util: 41, memUsedMiB: 12_288, powerW: 280, tempC: 58 });

    context = await newContext(browser, bed.t.api.url);
    page = await context.newPage();
    const login = new LoginPage(page);
    await login.open();
    await login.signIn(alice.email, alice.password);
    await new Shell(page).signedIn();
    const detail = new SessionPage(page);
    await detail.open(id);
    await detail.waitForPhase("Running");
    await detail.gpuCharts().waitFor();

    const util = detail.panel("session.gpu_utilization");
    const mem = detail.panel("session.gpu_memory_used");
    // The panels refresh on their own every 15 s: the first figures may need a round or two.
    await expect.poll(async () => util.latest().textContent(), { timeout: 60_000, interval: 1000 }).toBe("41 %");
    await expect
      .poll(async () => mem.latest().textContent(), { timeout: 60_000, interval: 1000 })
      .toMatch(/^12(\.0)? GiB$/);
    // One series each: her session's card, nothing else on the node.
    expect(await util.rows().count()).toBe(1);

    exporter.setContainer(ref, { util: 87, memUsedMiB: 40_960 });
    exporter.setCard(CARD, { util: 87, memUsedMiB: 40_960 });
    await expect.poll(async () => util.latest().textContent(), { timeout: 60_000, interval: 1000 }).toBe("87 %");
    await util.focusPlot();
    await page.keyboard.press("End");
    expect(await util.readout().textContent()).toContain("87 %");
    await util.openTable();
    await shots.take(page, "session-gpu-live");
    await expectAccessible(page, "the session's page with its GPU charts, one read out and its table open");
    await bedApi(bed, alice).call("terminateSession", { params: { sessionId: id } });
  });
});
