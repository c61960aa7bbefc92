// Journeys of a member on the whole session path (Postgres, API, worker, operators, two GPU clusters):
// creating a session in the wizard and watching it become Running without reloading; pausing it and
// seeing the GPU count go back up; a second member's session waiting in the queue with its position and
// starting when a GPU frees up; opening the notebook in a new tab through the cluster's gateway to the
// application (the stand-in); the policy's quota refusal shown with its message; the list staying
// current by polling when the event stream is cut; and a member of an organization with too few credits
// told why before Create (and led to ask for credits), then shown create's `quota_exceeded` with its
// request id when a colleague's session takes the credits after her preview said yes.

import type { TestUser } from "@berth/api/testing";
import { ensureConsoleBuilt } from "@berth/console";
import { ApiError, type BodyOf } from "@berth/console/client";
import type { Browser, BrowserContext, Page, Route } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { apiAs, bedApi, refusalOf } from "../api-client.ts";
import { type SessionsBed, startSessionsBed } from "../sessions/harness.ts";
import { closeBrowser, expectAccessible, launchBrowser, PHONE, Screenshots } from "./browser.ts";
import { CreditsPages } from "./pages/credits-pages.ts";
import { NewSessionPage } from "./pages/new-session-page.ts";
import { QueuePage } from "./pages/queue-page.ts";
import { SessionPage } from "./pages/session-page.ts";
import { SessionsListPage } from "./pages/sessions-list-page.ts";
import { Shell } from "./pages/shell.ts";
import { StandInApp } from "./pages/stand-in-app.ts";
import { Visitors } from "./pages/visitors.ts";
import { type SessionGateways, startSessionGateways } from "./stack.ts";

let bed: SessionsBed;
let browser: Browser;
const people = new Visitors(
  () => browser,
  () => bed.t.api.url,
);
const shots = new Screenshots("member-sessions");
let gateways: SessionGateways | undefined;

// The console's event stream cut from the start: the page must keep current by polling.
const cutEvents = (c: BrowserContext) =>
  c.route("**/api/v1/sessions/events*", (route) => route.abort("connectionreset"));

const body = (over: Partial<BodyOf<"createSession">> = {}): BodyOf<"createSession"> => ({
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
afterEach(async (ctx) => shots.onFailure(people.current, ctx));
afterAll(async () => {
  await people.closeAll();
  await closeBrowser(browser);
  await gateways?.stop();
  await bed?.stop();
});

describe("a member's sessions in the console", () => {
  let alice: Page;
  let sessionId: string;
  let secondId = "";
  const figures: Record<string, number> = {};

  it("an empty list says how to start, and passes the accessibility check", async () => {
    alice = await people.signIn(bed.alice);
    await new SessionsListPage(alice).open();
    await new SessionsListPage(alice).emptyState().waitFor();
    // Time to interactive, as the browser counts it: from the navigation's start to the list rendered.
    figures.sessionsPageInteractiveMs = await alice.evaluate(() => Math.round(performance.now()));
    await expect.poll(() => new SessionsListPage(alice).liveMode()).toBe("live");
    await shots.take(alice, "empty-list");
    await expectAccessible(alice);
  });

  it("the wizard shows free GPUs and the cost, and the new session becomes Running without a reload", async () => {
    const wizard = new NewSessionPage(alice);
    await wizard.open();
    await wizard.chooseOffering("h100");
    await expect.poll(() => wizard.freeGpus("h100")).toBe(2);
    await wizard.gpuNow().waitFor();
    expect(await wizard.costTotal().textContent()).toContain("4.00 credits");
    await shots.take(alice, "wizard");
    await expectAccessible(alice);
    await alice.evaluate(() => {
      (window as unknown as { __noReload: boolean }).__noReload = true;
    });
    sessionId = await wizard.create("notebook");
    const detail = new SessionPage(alice);
    await detail.waitForPhase("Running");
    expect(await alice.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
    expect(await detail.node().textContent()).toBe("gpu-a-1");
    await detail.timelineShows("Ready");
    await shots.take(alice, "running");
    await expectAccessible(alice);
  });

  it("Open notebook opens a new tab that lands on the application through the cluster's gateway", async () => {
    const detail = new SessionPage(alice);
    await detail.open(sessionId);
    await detail.waitForPhase("Running");
    const cr = (await bedApi(bed, bed.alice).call("getSession", { params: { sessionId } })).resource_name;
    const tab = await detail.connect("lab");
    await tab.waitForURL((u) => u.pathname === `/proxy/${cr}/lab` && !u.searchParams.has("svc_cnx"), {
      timeout: 20_000,
    });
    const app = new StandInApp(tab).root();
    await app.waitFor();
    expect(await app.getAttribute("data-cr")).toBe(cr);
    expect(new URL(tab.url()).host).toBe(`127.0.0.1:${gateways?.byCluster.get("gpu-a")?.port}`);
    await shots.take(tab, "notebook-tab");
    await tab.close();
    await detail.logsShow("ready");
  });

  // The delay between the API's Running and the row's is a figure this journey prints (timed assertions
  // belong in bench/), so the name promises only what is checked: the open list follows without a reload.
  it("the open list's row turns Running when the session does, without a reload", async () => {
    const list = new SessionsListPage(alice);
    await list.open();
    const created = await bedApi(bed, bed.alice).call("createSession", {
      body: body({ offering: "l4", name: "second" }),
    });
    const id = created.id;
    secondId = id;
    await list.row(id).waitFor();
    const loads: string[] = [];
    const record = (f: { url(): string }) => loads.push(f.url());
    alice.on("framenavigated", record);
    // When the API first says Running, and when the row shows it.
    const apiRunning = (async () => {
      for (;;) {
        const r = await bedApi(bed, bed.alice).call("getSession", { params: { sessionId: id } });
        if (r.phase === "Running") return performance.now();
        await new Promise((res) => setTimeout(res, 20));
      }
    })();
    await list.waitForPhase(id, "Running");
    const rowAt = performance.now();
    alice.off("framenavigated", record);
    expect(loads, "the page was not reloaded or navigated while waiting").toEqual([]);
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
      bobIds.push((await bedApi(bed, bed.bob).call("createSession", { body: body({ name }) })).id);
    }
    const [first, , third] = bobIds as [string, string, string];
    await bed.waitFor(bed.bob, third, (s) => s.phase === "Queued", "Queued");
    // The queue pages over history rows, written just after the status the detail shows: a page loaded
    // in between would wait for the next session event to list it.
    await expect
      .poll(async () => (await bedApi(bed, bed.bob).call("listQueue")).data.some((e) => e.session.id === third))
      .toBe(true);
    const bob = await people.signIn(bed.bob);
    const queue = new QueuePage(bob);
    await queue.open();
    await queue.row(third).waitFor();
    expect(await queue.position(third)).toBe("#1");
    expect((await queue.reason(third))?.length).toBeGreaterThan(0);
    await shots.take(bob, "queue");
    await expectAccessible(bob);
    const third_ = new SessionPage(bob);
    await third_.open(third);
    await third_.queueInfo().waitFor();
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
    people.current = alice;
    // The default policy allows 4 running or waiting sessions per user: fill Alice's up to the limit.
    let refused = false;
    for (let i = 1; i <= 6 && !refused; i++) {
      try {
        await bedApi(bed, bed.alice).call("createSession", { body: body({ offering: "l4", name: `q-${i}` }) });
      } catch (e) {
        if (!(e instanceof ApiError) || e.status !== 403) throw e;
        refused = true;
      }
    }
    expect(refused).toBe(true);
    const wizard = new NewSessionPage(alice);
    await wizard.open();
    await wizard.chooseOffering("l4");
    await wizard.name("one-too-many");
    // The cost preview asks what create would answer: the refusal shows before anything is sent.
    const refusal = await wizard.refusal();
    expect(refusal).toMatchObject({ code: "quota_exceeded", limit: "maxConcurrentSessionsPerUser" });
    expect(refusal.explanation).toMatch(/^You have \d+ running or waiting sessions and may have at most \d+\.$/);
    expect(refusal.message).toMatch(/running or waiting sessions per user/);
    expect(await wizard.createButton().isDisabled()).toBe(true);
    expect(await wizard.refusalRemedy().getAttribute("href")).toBe("/sessions");
    await shots.take(alice, "quota-exceeded");
    await expectAccessible(alice);
  });

  it("with the event stream cut, the list says Polling and keeps updating", async () => {
    const cut = await people.signIn(bed.alice, { prepare: cutEvents });
    const list = new SessionsListPage(cut);
    await list.open();
    await expect.poll(() => list.liveMode(), { timeout: 15_000 }).toBe("polling");
    await shots.take(cut, "polling");
    await bedApi(bed, bed.alice).call("pauseSession", { params: { sessionId: secondId } });
    await list.waitForPhase(secondId, "Paused", 30_000);
    expect(await list.liveMode()).toBe("polling");
    await shots.take(cut, "polling-updated");
  });

  afterAll(() => {
    console.log(`[console figures] ${JSON.stringify(figures)}`);
  });
});

// The credits door (docs/dev/billing.md, At the door): a session needs credits for its 10-minute minimum
// run before it may start. An organization of its own (the bed's Acme has 1,000 credits), so the journey
// does not depend on what the one above left running.
describe("a member whose organization has too few credits", () => {
  let org: { id: string };
  let orgWalletId: string;
  let carol: TestUser;
  let dave: TestUser;
  let carolPage: Page;
  let daveSession = "";
  let previewMessage = "";

  /** The super_admin grants `amount` minor units to the organization's wallet, through the public API. */
  const grant = async (amount: string, key: string) => {
    await bedApi(bed, bed.superAdmin).call(
      "allocateCredits",
      { body: { from_wallet_id: "wal_system", to_wallet_id: orgWalletId, amount, reason: "the thin organization" } },
      { idempotencyKey: key },
    );
  };

  beforeAll(async () => {
    org = await bed.t.anOrganization("Thin");
    [carol, dave] = await Promise.all([bed.t.aUser(), bed.t.aUser()]);
    await bed.t.member(carol, org.id, null, "member");
    await bed.t.member(dave, org.id, null, "member");
    const opened = await bedApi(bed, bed.superAdmin).call("openWallet", {
      body: { organization_id: org.id, owner_kind: "organization" },
    });
    orgWalletId = opened.id;
    // 0.2 credits: 3 minutes of an H100 at 4 credits/h, short of the 0.67 its 10-minute minimum run costs.
    await grant("200000", "thin-first");
  });
  afterAll(async () => {
    if (daveSession)
      await bedApi(bed, dave)
        .call("terminateSession", { params: { sessionId: daveSession } })
        .catch(() => {});
  });

  it("the wizard says in plain words why an H100 session cannot start, and Create is disabled", async () => {
    carolPage = await people.signIn(carol);
    const wizard = new NewSessionPage(carolPage);
    await wizard.open();
    await wizard.chooseOffering("h100");
    const refusal = await wizard.refusal();
    expect(refusal).toMatchObject({ code: "quota_exceeded", limit: "credits" });
    expect(refusal.explanation).toBe("Your credits cover 3 minutes; a session needs 10 minutes at 4 credits/h.");
    expect(refusal.message).toMatch(/hold 0\.2 credits; a session on this offering needs 0\.666667 to run 10 minutes/);
    previewMessage = refusal.message;
    expect(await wizard.createButton().isDisabled()).toBe(true);
    expect(await wizard.createBlocked().textContent()).toContain("not enough credits to start");
    const ask = wizard.refusalRemedy();
    expect(await ask.getAttribute("data-kind")).toBe("ask-credits");
    expect(await ask.textContent()).toBe("Ask for credits");
    // What an hour (the preview's duration) costs, less what she has: 4 − 0.2, rounded up to whole credits.
    expect(await ask.getAttribute("href")).toBe(`/credits/requests?org=${org.id}&amount=4`);
    await shots.take(carolPage, "credits-refusal");
    await expectAccessible(carolPage);
  });

  it("create called anyway through the API is refused with quota_exceeded, its message and a request id", async () => {
    let header: string | null = null;
    const asCarol = apiAs(bed.t.api.url, carol.token, (res) => {
      header = res.headers.get("x-request-id");
    });
    const e = await refusalOf(asCarol.call("createSession", { body: body({ name: "anyway" }) }));
    expect(e.status, e.message).toBe(403);
    expect(e).toMatchObject({ code: "quota_exceeded", details: { limit: "credits", value: "200000" } });
    expect(e.message).toBe(previewMessage);
    expect(e.requestId).toBe(header);
    expect(e.requestId).toMatch(/\S/);
  });

  it("Ask for credits opens the request form for her organization with the amount filled in", async () => {
    await new NewSessionPage(carolPage).refusalRemedy().click();
    await carolPage.waitForURL((u) => u.pathname === "/credits/requests");
    const credits = new CreditsPages(carolPage);
    await credits.askForm().waitFor();
    await expect.poll(() => credits.askAmountValue()).toBe("4");
    expect(await credits.askOrganization()).toBe(org.id);
    expect(await credits.askFor()).toBe("");
    await shots.take(carolPage, "credits-ask-prefilled");
    await expectAccessible(carolPage);
  });

  it("when a colleague's session takes the credits after her preview said yes, Create shows the API's quota_exceeded with its request id", async () => {
    // 1 credit: 15 minutes, enough for one minimum run (0.67) and not for two.
    await grant("800000", "thin-second");
    const wizard = new NewSessionPage(carolPage);
    await wizard.open();
    await wizard.chooseOffering("h100");
    await wizard.name("too-late");
    await wizard.previewAnswered();
    expect(await wizard.createButton().isEnabled()).toBe(true);
    // Her page asks the preview again whenever its live feed says anything may have changed (a reconnect or
    // a poll: on a loaded machine, at any moment). Those asks are held until her Create is answered, so her
    // click meets the yes she saw, as a click that beats the refresh does; the last answer stays meanwhile.
    const held: Route[] = [];
    const previews = "**/api/v1/sessions/preview-cost";
    await carolPage.route(previews, (route) => {
      held.push(route);
    });
    // Dave's session is let in first and is owed its minimum run; his events are not on her stream, so her
    // preview still says yes. The door decides under its lock.
    daveSession = (await bedApi(bed, dave).call("createSession", { body: body({ name: "first" }) })).id;
    const [response] = await Promise.all([
      carolPage.waitForResponse(
        (res) => res.request().method() === "POST" && new URL(res.url()).pathname === "/api/v1/sessions",
      ),
      wizard.createButton().click(),
    ]);
    await carolPage.unroute(previews);
    for (const route of held) await route.continue().catch(() => {}); // an ask a newer one replaced is gone
    expect(response.status()).toBe(403);
    const sent = (await response.json()) as { error: { code: string; message: string; request_id: string } };
    const shell = new Shell(carolPage);
    const panel = shell.errorPanel();
    await panel.waitFor();
    expect(await panel.getAttribute("data-code")).toBe("quota_exceeded");
    expect(sent.error.message).toMatch(
      /of which 0\.666667 are owed to the minimum runs of 1 session\(s\) already let in/,
    );
    expect(await shell.errorPanelMessage().textContent()).toBe(sent.error.message);
    expect(await shell.errorPanelRequestId().textContent()).toBe(sent.error.request_id);
    expect(sent.error.request_id).toBe(response.headers()["x-request-id"]);
    expect(new URL(carolPage.url()).pathname).toBe("/sessions/new");
    await shots.take(carolPage, "credits-create-refused");
    await expectAccessible(carolPage);
    // The wizard asks the preview again: it now says so beside Create, counting the credits kept for
    // Dave's session, and Create stays off.
    const refusal = await wizard.refusal();
    expect(refusal).toMatchObject({ code: "quota_exceeded", limit: "credits" });
    // 1 − 0.666667 = 0.333333 credits last 4 min 59 s, said "4 minutes" (rounded down); a usage charge of
    // Dave's running session (one a minute) may land first and lower it.
    expect(refusal.explanation).toMatch(
      /^Your credits cover [234] minutes once 0\.666667 credits are kept for the session already started in your organization; a session needs 10 minutes at 4 credits\/h\.$/,
    );
    expect(await wizard.createButton().isDisabled()).toBe(true);
  });
});
