// Idle auto-pause as a member meets it in the browser: the session's page shows the countdown once the
// idle warning is out, "Keep running" withdraws it; left alone, the session is paused and the page says why
// in plain words; while a signal is missing the page says which, and that idle pausing waits for it. The
// reclaim loop runs on the test's clock; the activity reports come over the internal plane as the
// cluster's gateway and operator send them.
import { readFileSync } from "node:fs";
import { reclaimWorkerLoop } from "@berth/api";
import { ensureConsoleBuilt } from "@berth/console";
import { HttpKube } from "@berth/controllers/kube";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import { type GpuClusterHandle, type SessionsBed, startSessionsBed } from "../sessions/harness.ts";
import { closeBrowser, closeContexts, expectAccessible, launchBrowser, newContext, Screenshots } from "./browser.ts";
import { LoginPage } from "./pages/login-page.ts";
import { SessionPage } from "./pages/session-page.ts";
import { Shell } from "./pages/shell.ts";

vi.setConfig({ testTimeout: 180_000, hookTimeout: 300_000 });

let bed: SessionsBed;
let browser: Browser | undefined;
let context: BrowserContext | undefined;
let page: Page | undefined;
const shots = new Screenshots("member-idle-session");
const MIN = 60_000;

beforeAll(async () => {
  ensureConsoleBuilt();
  bed = await startSessionsBed({ workerReclaim: false });
  browser = await launchBrowser();
});
afterEach(async (ctx) => shots.onFailure(page, ctx));
afterAll(async () => {
  await closeContexts([context]);
  await closeBrowser(browser);
  await bed?.stop();
});

async function report(h: GpuClusterHandle, at: number, sessions: { gateway: unknown[]; operator: unknown[] }) {
  for (const [source, list] of [
    ["gateway", sessions.gateway],
    ["operator", sessions.operator],
  ] as const) {
    const res = await fetch(`${bed.plane.url}/internal/v1/sessions/activity`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${readFileSync(h.tokenFile, "utf8").trim()}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ cluster_id: h.id, source, observed_at: new Date(at).toISOString(), sessions: list }),
    });
    if (res.status !== 200) throw new Error(`activity report: ${res.status} ${await res.text()}`);
  }
}

describe("a member's idle session", () => {
  it("says which activity signal is missing while idle pausing is suspended", async () => {
    const gpuA = bed.gpu["gpu-a"] as GpuClusterHandle;
    const { id } = await bedApi(bed, bed.alice).call("createSession", {
      body: { offering: "h100", preset: "gpu-small", image: "jupyterlab", name: "no-signals-yet" },
    });
    await bed.waitFor(bed.alice, id, (x) => x.phase === "Running", "Running");
    const own = await newContext(browser as Browser, bed.t.api.url);
    page = await own.newPage();
    try {
      await new LoginPage(page).open();
      await new LoginPage(page).signIn(bed.alice.email, bed.alice.password);
      await new Shell(page).signedIn();
      await new SessionPage(page).open(id);
      // Nothing has reported yet: every signal is unknown.
      const suspended = new SessionPage(page).idleSuspended();
      await suspended.waitFor();
      expect(await suspended.getAttribute("data-missing")).toBe("gpu,traffic,notebook");
      expect(await suspended.textContent()).toMatch(/^Idle pausing is suspended for this session: no GPU utilisation/);
      await expectAccessible(page, "a suspended idle rule");
      await shots.take(page, "idle-suspended-all");
      // The operator reports the GPU and the notebook; the gateway stays silent: only traffic is missing.
      const res = await fetch(`${bed.plane.url}/internal/v1/sessions/activity`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${readFileSync(gpuA.tokenFile, "utf8").trim()}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({
          cluster_id: gpuA.id,
          source: "operator",
          observed_at: new Date().toISOString(),
          sessions: [{ session: id, gpu_utilization: 0, notebook: { state: "ok", busy: false, last_activity: null } }],
        }),
      });
      expect(res.status).toBe(200);
      await page.reload();
      await expect
        .poll(() => new SessionPage(page as Page).idleSuspended().getAttribute("data-missing"))
        .toBe("traffic");
      expect(await new SessionPage(page).idleSuspended().textContent()).toContain(
        "its cluster's session gateway has not reported",
      );
      await shots.take(page, "idle-suspended-traffic");
    } finally {
      await own.close().catch(() => {});
      // A refusal here must not hide the failure that brought the test to this block.
      await bedApi(bed, bed.alice)
        .call("terminateSession", { params: { sessionId: id } })
        .catch(() => {});
    }
  });

  it("shows the countdown, is kept running from the page, and once left alone is paused with the reason in words", async () => {
    const gpuA = bed.gpu["gpu-a"] as GpuClusterHandle;
    const { id } = await bedApi(bed, bed.alice).call("createSession", {
      body: { offering: "h100", preset: "gpu-small", image: "jupyterlab", name: "idle-demo" },
    });
    const s = await bed.waitFor(bed.alice, id, (x) => x.phase === "Running", "Running");
    const t0 = Date.parse(s.started_at);
    let now = t0;
    const loop = reclaimWorkerLoop({
      db: bed.workerDb,
      kube: new HttpKube(bed.workerKubeConfig, { userAgent: "berth-worker" }),
      log: bed.t.deps.log,
      clock: { now: () => new Date(now) },
    });
    const quiet = [{ session: id, gpu_utilization: 0, notebook: { state: "ok", busy: false, last_activity: null } }];
    const tick = async (min: number) => {
      now = t0 + min * MIN;
      await report(gpuA, now, { gateway: [], operator: quiet });
      return loop.pass();
    };
    for (let m = 1; m <= 46; m++) await tick(m);

    context = await newContext(browser as Browser, bed.t.api.url);
    page = await context.newPage();
    await new LoginPage(page).open();
    await new LoginPage(page).signIn(bed.alice.email, bed.alice.password);
    await new Shell(page).signedIn();
    const sp = new SessionPage(page);
    await sp.open(id);
    await sp.idleWarning().waitFor();
    expect(await sp.idleWarning().textContent()).toMatch(/will be paused/);
    await expectAccessible(page, "the idle warning");
    await shots.take(page, "idle-warning");

    // Keep running: the API counts it as activity now (the API's clock is the wall's; the loop's is ahead,
    // so the test's clock follows it to the same instant).
    await sp.keepRunning();
    await sp.idleWarning().waitFor({ state: "detached" });
    expect((await bedApi(bed, bed.alice).call("getSession", { params: { sessionId: id } })).idle_warning).toBeNull();

    // Left alone after that, it is warned again and paused; the page says why.
    const keptAt = Date.now();
    now = keptAt;
    let paused = false;
    for (let m = 1; m <= 61 && !paused; m++) {
      now = keptAt + m * MIN;
      await report(gpuA, now, { gateway: [], operator: quiet });
      paused = (await loop.pass()).paused.length > 0;
    }
    expect(paused).toBe(true);
    await sp.waitForPhase("Paused", 60_000);
    await sp.pauseReason().waitFor();
    expect(await sp.pauseReason().textContent()).toMatch(/nobody used it for its idle timeout/);
    await expectAccessible(page, "a session paused for idleness");
    await shots.take(page, "paused-idle");
  });
});
