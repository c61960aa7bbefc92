// Journeys of a member on the whole session path (Postgres, API, worker, operators, two GPU clusters):
// creating a session in the wizard and watching it become Running without reloading; pausing it and
// seeing the GPU count go back up; a second member's session waiting in the queue with its position and
// starting when a GPU frees up; opening the notebook in a new tab through the cluster's gateway to the
// application (the stand-in); the policy's quota refusal shown with its message; and the list staying
// current by polling when the event stream is cut.

import { ensureConsoleBuilt } from "@berth/console";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { TestUser } from "../../../api/src/auth/testing.ts";
import { type SessionsBed, startSessionsBed } from "../sessions/harness.ts";
import { describeViolations, launchBrowser, newContext, PHONE, Screenshots, seriousA11yViolations } from "./browser.ts";
import { LoginPage } from "./pages/login-page.ts";
import { NewSessionPage, SessionPage, SessionsListPage } from "./pages/sessions-pages.ts";
import { type SessionGateways, startSessionGateways } from "./stack.ts";

let bed: SessionsBed;
let browser: Browser;
const contexts: BrowserContext[] = [];
const shots = new Screenshots("member-sessions");
let current: Page | undefined;
let gateways: SessionGateways | undefined;

async function signedIn(user: TestUser, opts: { cutEvents?: boolean } = {}): Promise<Page> {
  const context = await newContext(browser, bed.t.api.url);
  contexts.push(context);
  if (opts.cutEvents) await context.route("**/api/v1/sessions/events*", (route) => route.abort("connectionreset"));
  const page = await context.newPage();
  const login = new LoginPage(page);
  await login.open();
  await login.signIn(user.email, user.password);
  await page.getByTestId("account-menu").waitFor();
  current = page;
  return page;
}

const body = (over: Record<string, unknown> = {}) => ({
  offering: "h100",
  preset: "gpu-small",
  image: "jupyterlab",
  ...over,
});

beforeAll(async () => {
  ensureConsoleBuilt();
  bed = await startSessionsBed();
  gateways = await startSessionGateways(bed);
  browser = await launchBrowser();
});
afterEach(async (ctx) => shots.onFailure(current, ctx));
afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  await gateways?.stop();
  await bed?.stop();
});

describe("a member's sessions in the console", () => {
  let alice: Page;
  let sessionId: string;
  let secondId = "";
  const figures: Record<string, number> = {};

  it("an empty list says how to start, and passes the accessibility check", async () => {
    alice = await signedIn(bed.alice);
    await new SessionsListPage(alice).open();
    await alice.getByTestId("empty-state").waitFor();
    // Time to interactive, as the browser counts it: from the navigation's start to the list rendered.
    figures.sessionsPageInteractiveMs = await alice.evaluate(() => Math.round(performance.now()));
    await expect.poll(() => new SessionsListPage(alice).liveMode()).toBe("live");
    await shots.take(alice, "empty-list");
    const v = await seriousA11yViolations(alice);
    expect(v, describeViolations(v)).toEqual([]);
  });

  it("the wizard shows free GPUs and the cost, and the new session becomes Running without a reload", async () => {
    const wizard = new NewSessionPage(alice);
    await wizard.open();
    await wizard.chooseOffering("h100");
    await expect.poll(() => wizard.freeGpus("h100")).toBe(2);
    await alice.getByTestId("gpu-now").waitFor();
    expect(await alice.getByTestId("cost-total").textContent()).toContain("4.00 credits");
    await shots.take(alice, "wizard");
    const v = await seriousA11yViolations(alice);
    expect(v, describeViolations(v)).toEqual([]);
    await alice.evaluate(() => {
      (window as unknown as { __noReload: boolean }).__noReload = true;
    });
    sessionId = await wizard.create("notebook");
    const detail = new SessionPage(alice);
    await detail.waitForPhase("Running");
    expect(await alice.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
    expect(await alice.getByTestId("session-node").textContent()).toBe("gpu-a-1");
    await alice.getByTestId("timeline").getByText("Ready").first().waitFor();
    await shots.take(alice, "running");
    const v2 = await seriousA11yViolations(alice);
    expect(v2, describeViolations(v2)).toEqual([]);
  });

  it("Open notebook opens a new tab that lands on the application through the cluster's gateway", async () => {
    const detail = new SessionPage(alice);
    await detail.open(sessionId);
    await detail.waitForPhase("Running");
    const cr = (await bed.call(bed.alice, "GET", `/api/v1/sessions/${sessionId}`)).body.resource_name as string;
    const [tab] = await Promise.all([alice.context().waitForEvent("page"), alice.getByTestId("connect-lab").click()]);
    await tab.waitForURL((u) => u.pathname === `/proxy/${cr}/lab` && !u.searchParams.has("svc_cnx"), {
      timeout: 20_000,
    });
    const app = tab.getByTestId("standin-app");
    await app.waitFor();
    expect(await app.getAttribute("data-cr")).toBe(cr);
    expect(new URL(tab.url()).host).toBe(`127.0.0.1:${gateways?.byCluster.get("gpu-a")?.port}`);
    await shots.take(tab, "notebook-tab");
    await tab.close();
    await alice.getByTestId("logs").getByText("ready").first().waitFor();
  });

  it("the list row turns Running moments after the cluster's pod does", async () => {
    const list = new SessionsListPage(alice);
    await list.open();
    const created = await bed.call(bed.alice, "POST", "/api/v1/sessions", body({ offering: "l4", name: "second" }));
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    secondId = id;
    await list.row(id).waitFor();
    // When the API first says Running, and when the row shows it.
    const apiRunning = (async () => {
      for (;;) {
        const r = await bed.call(bed.alice, "GET", `/api/v1/sessions/${id}`);
        if (r.body.phase === "Running") return performance.now();
        await new Promise((res) => setTimeout(res, 20));
      }
    })();
    await list.waitForPhase(id, "Running");
    const rowAt = performance.now();
    figures.runningToRowMs = Math.round(rowAt - (await apiRunning));
    await shots.take(alice, "list-running");
    await alice.setViewportSize(PHONE);
    await shots.take(alice, "list-phone");
    await alice.setViewportSize({ width: 1280, height: 800 });
  });

  it("pausing returns the GPU: the wizard's free count goes back up", async () => {
    const wizard = new NewSessionPage(alice);
    await wizard.open();
    await expect.poll(() => wizard.freeGpus("h100")).toBe(1);
    const detail = new SessionPage(alice);
    await detail.open(sessionId);
    await detail.act("pause");
    await detail.waitForPhase("Paused");
    await shots.take(alice, "paused");
    await wizard.open();
    await expect.poll(() => wizard.freeGpus("h100"), { timeout: 15_000 }).toBe(2);
    await shots.take(alice, "wizard-after-pause");
  });

  it("a second member's session waits in the queue with its position, and starts when a GPU frees up", async () => {
    const bobIds: string[] = [];
    for (const name of ["bob-1", "bob-2", "bob-3"]) {
      const r = await bed.call(bed.bob, "POST", "/api/v1/sessions", body({ name }));
      expect(r.status).toBe(201);
      bobIds.push(r.body.id);
    }
    const [first, , third] = bobIds as [string, string, string];
    await bed.waitFor(bed.bob, third, (s) => s.phase === "Queued", "Queued");
    const bob = await signedIn(bed.bob);
    await bob.goto("/queue");
    const row = bob.locator(`[data-testid="queue-row"][data-session-id="${third}"]`);
    await row.waitFor();
    expect(await row.getByTestId("queue-position").textContent()).toBe("#1");
    expect((await row.getByTestId("queue-reason").textContent())?.length).toBeGreaterThan(0);
    await shots.take(bob, "queue");
    const v = await seriousA11yViolations(bob);
    expect(v, describeViolations(v)).toEqual([]);
    const third_ = new SessionPage(bob);
    await third_.open(third);
    await bob.getByTestId("queue-info").waitFor();
    await shots.take(bob, "queued-session");
    const firstPage = new SessionPage(bob);
    await firstPage.open(first);
    await firstPage.waitForPhase("Running");
    await firstPage.act("terminate");
    await firstPage.waitForPhase("Terminated", 30_000).catch(async () => firstPage.waitForPhase("Terminating"));
    await bob.goto(`/sessions/${third}`);
    await new SessionPage(bob).waitForPhase("Running", 45_000);
    await shots.take(bob, "queued-session-started");
  });

  it("at the policy's limit the wizard says why before Create, and Create stays disabled", async () => {
    current = alice;
    // The default policy allows 4 running or waiting sessions per user: fill Alice's up to the limit.
    let refused = false;
    for (let i = 1; i <= 6 && !refused; i++) {
      const r = await bed.call(bed.alice, "POST", "/api/v1/sessions", body({ offering: "l4", name: `q-${i}` }));
      refused = r.status === 403;
      if (!refused) expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
    expect(refused).toBe(true);
    const wizard = new NewSessionPage(alice);
    await wizard.open();
    await wizard.chooseOffering("l4");
    await alice.getByTestId("session-name").fill("one-too-many");
    // The cost preview asks what create would answer: the refusal shows before anything is sent.
    const refusal = await wizard.refusal();
    expect(refusal).toMatchObject({ code: "quota_exceeded", limit: "maxConcurrentSessionsPerUser" });
    expect(refusal.explanation).toMatch(/^You have \d+ running or waiting sessions and may have at most \d+\.$/);
    expect(refusal.message).toMatch(/running or waiting sessions per user/);
    expect(await alice.getByTestId("create-session").isDisabled()).toBe(true);
    expect(await alice.getByTestId("refusal-remedy").getAttribute("href")).toBe("/sessions");
    await shots.take(alice, "quota-exceeded");
    const v = await seriousA11yViolations(alice);
    expect(v, describeViolations(v)).toEqual([]);
  });

  it("with the event stream cut, the list says Polling and keeps updating", async () => {
    const cut = await signedIn(bed.alice, { cutEvents: true });
    const list = new SessionsListPage(cut);
    await list.open();
    await expect.poll(() => list.liveMode(), { timeout: 15_000 }).toBe("polling");
    await shots.take(cut, "polling");
    const paused = await bed.call(bed.alice, "POST", `/api/v1/sessions/${secondId}/pause`);
    expect(paused.status, JSON.stringify(paused.body)).toBe(202);
    await list.waitForPhase(secondId, "Paused", 30_000);
    expect(await list.liveMode()).toBe("polling");
    await shots.take(cut, "polling-updated");
  });

  afterAll(() => {
    console.log(`[console figures] ${JSON.stringify(figures)}`);
  });
});
