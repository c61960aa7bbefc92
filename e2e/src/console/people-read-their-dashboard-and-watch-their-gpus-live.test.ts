// Journey: a researcher lands on their dashboard (their sessions, GPU-hours, credits, balance) and watches
// their GPU chart follow the load the exporter reports; an administrator's
// dashboard shows the fleet tiles and fleet charts, a cluster's page its session gateway's latency, errors
// and requests by replica, and with the metrics server stopped the charts say so while the tiles stay. Real API, Postgres, metrics server, stand-in exporter and Chromium; axe on each page.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureLocalDemo } from "@berth/api";
import { GatewayMetrics } from "@berth/operator/gateway";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunningGpuExporter, startGpuExporter } from "../testbed/gpu-exporter.ts";
import { type RunningMetricsServer, startMetricsServer } from "../testbed/metrics-server.ts";
import { closeBrowser, expectAccessible, launchBrowser, newContext, Screenshots } from "./browser.ts";
import { ClustersPage } from "./pages/clusters-page.ts";
import { DashboardPage } from "./pages/dashboard-page.ts";
import { LoginPage } from "./pages/login-page.ts";
import { PasswordPage } from "./pages/password-page.ts";
import { ADMIN_EMAIL, ADMIN_FIRST_PASSWORD, type ConsoleStack, startConsoleStack } from "./stack.ts";

const CLUSTER = "clu_consolemon";
const CARD = "GPU-9f3a2c71-0001";
const RESEARCHER_PASSWORD = "first-researcher-pw-1";

describe("dashboards and live GPU charts in the console", () => {
  let dir: string;
  let vm: RunningMetricsServer;
  let exporter: RunningGpuExporter;
  let stack: ConsoleStack;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let sessionId: string;
  let forwarding: NodeJS.Timeout | undefined;
  const shots = new Screenshots("people-read-their-dashboard-and-watch-their-gpus-live");

  /** Two gateway replicas' figures (the gateway's own registry), fed a steady load each round. */
  const replicas = { "berth-gateway-7f9c-a": new GatewayMetrics(), "berth-gateway-7f9c-b": new GatewayMetrics() };
  const gatewayLoad = () => {
    for (const [i, m] of Object.values(replicas).entries()) {
      for (let n = 0; n < 20 + 10 * i; n++) {
        m.upstream.observe({ outcome: "2xx" }, 0.004 + (n % 10) * 0.002);
        m.requests.inc({ code: "2xx" });
      }
      m.upstream.observe({ outcome: "2xx" }, 0.18);
      m.upstream.observe({ outcome: "failed" }, 1);
      m.requests.inc({ code: "5xx" });
    }
  };

  /** What an operator does every round: scrape the exporter and the gateway replicas, forward to the API's relay. */
  const forward = async () => {
    const text = await (await fetch(exporter.url)).text();
    gatewayLoad();
    const gateways = await Promise.all(
      Object.entries(replicas).map(async ([instance, m]) => ({
        job: "gateway",
        instance,
        text: await m.registry.metrics(),
      })),
    );
    await stack.api.deps.monitoring
      .forward(CLUSTER, [{ job: "gpu-exporter", text }, ...gateways])
      .catch(() => undefined);
  };

  const signIn = async (email: string, first: string, next: string) => {
    await new LoginPage(page).open();
    await new LoginPage(page).signIn(email, first);
    await new PasswordPage(page).waitFor();
    await new PasswordPage(page).change(first, next);
    await page.waitForURL((u) => u.pathname === "/dashboard");
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "berth-console-monitoring-"));
    vm = await startMetricsServer({ dir });
    exporter = await startGpuExporter({
      cards: [
        { uuid: CARD, node: "gpu-node-1", model: "NVIDIA-H100-80GB-HBM3", memoryMiB: 81_559 },
        { uuid: "GPU-9f3a2c71-0002", node: "gpu-node-1", model: "NVIDIA-H100-80GB-HBM3", memoryMiB: 81_559 },
      ],
    });
    stack = await startConsoleStack({ BERTH_METRICS_SERVER_URL: vm.url });
    const db = stack.db.db;
    const demo = await ensureLocalDemo(db, { password: RESEARCHER_PASSWORD });
    await db("clusters").insert({ id: CLUSTER, name: "gpu-east", session_domain: "east.test" });
    await db("cluster_nodes").insert({
      cluster_id: CLUSTER,
      name: "gpu-node-1",
      gpu_model: "NVIDIA-H100-80GB-HBM3",
      gpu_count: 2,
      gpu_allocatable: 2,
      gpu_in_use: 1,
      schedulable: true,
      ready: true,
      labels: "{}",
      observed_at: new Date(),
    });
    sessionId = `ses_${`consolemon${Date.now().toString(36)}`.padEnd(20, "0").slice(0, 20)}`;
    await db("sessions").insert({
      id: sessionId,
      cr_name: sessionId.replace("_", "-"),
      namespace: "org-demo",
      owner_id: demo.userId,
      organization_id: demo.organizationId,
      project_id: demo.projectId ?? null,
      display_name: "training-run",
      offering: "h100",
      preset: "gpu-small",
      image: "jupyterlab",
      gpu_model: "NVIDIA-H100-80GB-HBM3",
      gpu_count: 1,
      hourly_credit_rate: "2000000",
      cluster_id: CLUSTER,
      node: "gpu-node-1",
      phase: "Running",
      desired_state: "Running",
      started_at: new Date(Date.now() - 3_600_000),
      created_at: new Date(Date.now() - 3_600_000),
    });
    await db("usage_samples").insert({
      cluster_id: CLUSTER,
      sample_id: "smp-console-1",
      session: sessionId,
      period_start: new Date(Date.now() - 3_600_000),
      period_end: new Date(),
      gpu_seconds: 3600,
      gpu_utilization: 35,
    });
    const ref = { pod: sessionId.replace("_", "-"), namespace: "berth-sessions", container: "lab", uuid: CARD };
    exporter.setContainer(ref, { util: 35, memUsedMiB: 20_000 });
    exporter.setCard(CARD, { util: 35, memUsedMiB: 20_000, powerW: 250, tempC: 55 });
    exporter.setCard("GPU-9f3a2c71-0002", { util: 0 });
    await forward();
    forwarding = setInterval(() => void forward(), 1000);
    browser = await launchBrowser();
    context = await newContext(browser, stack.url);
    page = await context.newPage();
  }, 120_000);
  afterEach(async (ctx) => shots.onFailure(page, ctx));
  afterAll(async () => {
    clearInterval(forwarding);
    await closeBrowser(browser);
    await stack?.stop();
    await exporter?.stop();
    await vm?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("lands a researcher on their dashboard with their running session, GPU-hours and balance", async () => {
    await signIn("researcher@berth.local", RESEARCHER_PASSWORD, "a-researchers-password-2026");
    const dashboard = new DashboardPage(page);
    await dashboard.me().waitFor();
    expect(await dashboard.tile("running").textContent()).toBe("1");
    expect(await dashboard.tile("gpuHours").textContent()).toBe("1.0");
    expect(await dashboard.sessions("running").textContent()).toContain("training-run");
    expect(await dashboard.admin().count()).toBe(0);
    // Whose GPUs the charts show, in words: a member's own sessions', not the fleet's.
    expect(await dashboard.chartsScope().textContent()).toContain("your own sessions");
    // Their own GPUs' chart: the one card their session holds, never the idle one, named by its cluster.
    const chart = dashboard.panel("fleet.gpu_utilization");
    // The first forwarded samples become readable in the metrics server after a moment (more under load).
    await expect.poll(async () => chart.series(), { timeout: 20_000 }).toEqual(["gpu-east"]);
    await shots.take(page, "researcher-dashboard");
    await expectAccessible(page, "the researcher's dashboard");
  });

  it("follows the load on their GPU chart live, and reads it out to the keyboard", async () => {
    // The session page holds the same chart per session (session.gpu_utilization); it needs the
    // management cluster, which this journey does not start: the dashboard's chart is the live one here.
    const panel = new DashboardPage(page).panel("fleet.gpu_utilization");
    const latest = panel.latest();
    await expect.poll(async () => latest.textContent(), { timeout: 20_000 }).toBe("35 %");
    exporter.setContainer(
      { pod: sessionId.replace("_", "-"), namespace: "berth-sessions", container: "lab", uuid: CARD },
      { util: 92, memUsedMiB: 60_000 },
    );
    exporter.setCard(CARD, { util: 92, memUsedMiB: 60_000 });
    // The panel refreshes on its own every 15 s: no reload.
    await expect.poll(async () => latest.textContent(), { timeout: 40_000, interval: 1000 }).toBe("92 %");
    await panel.focusPlot();
    await page.keyboard.press("End");
    expect(await panel.readout().textContent()).toContain("92 %");
    await panel.openTable();
    await shots.take(page, "researcher-gpu-live");
    await expectAccessible(page, "the dashboard with its chart read out and its table open");
  }, 90_000);

  it("gives an administrator the fleet tiles and fleet charts", async () => {
    // Another person on the same browser: a fresh tab session.
    await page.evaluate(() => sessionStorage.clear());
    await signIn(ADMIN_EMAIL, ADMIN_FIRST_PASSWORD, "an-administrators-password-2026");
    const dashboard = new DashboardPage(page);
    await dashboard.fleet().waitFor();
    const row = await dashboard.fleetRows().first().textContent();
    expect(row).toContain("gpu-east");
    await dashboard.tile("storage").waitFor();
    // Spend by the names people know, the ids kept as the cells' titles.
    const spend = dashboard.firstSpendCells();
    expect(await spend.nth(0).textContent()).toBe("Demo");
    expect(await spend.nth(1).textContent()).toBe("Research");
    await expect.poll(async () => dashboard.panel("fleet.gpu_utilization").rows().count()).toBe(1);
    await shots.take(page, "admin-dashboard");
    await expectAccessible(page, "the administrator's dashboard");
  }, 120_000);

  it("shows an administrator a cluster's session gateway: latency, errors and requests by replica", async () => {
    await page.goto(`${stack.url}/admin/clusters/${CLUSTER}`);
    const gateway = new ClustersPage(page).gatewayPanels();
    await gateway.waitFor();
    const dashboard = new DashboardPage(page);
    const rows = (panel: string) => dashboard.panel(panel, gateway).series();
    // A rate needs two rounds a few seconds apart in the server: polled, not timed.
    await expect
      .poll(() => rows("cluster.gateway_latency"), { timeout: 30_000, interval: 1000 })
      .toEqual(["p50", "p99"]);
    await expect.poll(() => rows("cluster.gateway_errors"), { timeout: 20_000 }).toEqual(["errors"]);
    await expect
      .poll(() => rows("cluster.gateway_requests"), { timeout: 20_000 })
      .toEqual(["berth-gateway-7f9c-a", "berth-gateway-7f9c-b"]);
    const p50 = dashboard.panel("cluster.gateway_latency", gateway).latest();
    expect(await p50.textContent()).toMatch(/ ms$/);
    await gateway.scrollIntoViewIfNeeded();
    await shots.take(page, "admin-cluster-gateway");
    await expectAccessible(page, "a cluster's page with its gateway panels");
  }, 90_000);

  it("keeps an administrator's tiles when the metrics server stops, and the charts say so", async () => {
    await page.goto(`${stack.url}/dashboard`);
    await vm.stop();
    await page.reload();
    const dashboard = new DashboardPage(page);
    await dashboard.fleet().waitFor();
    // Answers the API cached in the last 10 s still come back; the panel's own 15 s refresh then meets the
    // stopped server.
    await expect
      .poll(async () => dashboard.firstPanelProblem().textContent(), { timeout: 40_000, interval: 1000 })
      .toContain("metrics server is not answering");
    expect(await dashboard.fleetRows().count()).toBe(1);
    await shots.take(page, "admin-dashboard-metrics-server-down");
  }, 120_000);
});
