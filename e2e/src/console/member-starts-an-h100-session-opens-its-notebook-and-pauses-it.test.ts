// The first milestone in a real browser, as a member meets it: sign in → start a session on an H100 in the
// wizard → watch it become Running without reloading (the event stream) → Open notebook opens a new tab
// through the cluster's real gateway (operator/src/gateway: connect token verified with the control plane,
// its cookie, the pod gate) to the stand-in JupyterLab → back to the console → Pause, confirmed → Paused,
// and the header's balance drops by the charge for the time it ran (the operator's usage samples, at the
// default 60 s interval; the pause sends the last, partial one).
//
// The gateway's certificate is self-signed: the journey's browser context alone trusts it
// (`ignoreHTTPSErrors` in newContext), not the browser or the machine.
import { ensureConsoleBuilt } from "@berth/console";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import { type SessionsBed, startSessionsBed } from "../sessions/harness.ts";
import { closeBrowser, closeContexts, expectAccessible, launchBrowser, newContext, Screenshots } from "./browser.ts";
import { CreditsPages } from "./pages/credits-pages.ts";
import { LoginPage } from "./pages/login-page.ts";
import { NewSessionPage } from "./pages/new-session-page.ts";
import { SessionPage } from "./pages/session-page.ts";
import { Shell } from "./pages/shell.ts";
import { StandInApp } from "./pages/stand-in-app.ts";
import { type SessionGateways, startSessionGateways } from "./stack.ts";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 300_000 });

let bed: SessionsBed;
let gateways: SessionGateways | undefined;
let browser: Browser | undefined;
let context: BrowserContext | undefined;
let page: Page | undefined;
const shots = new Screenshots("member-milestone");

beforeAll(async () => {
  ensureConsoleBuilt();
  bed = await startSessionsBed();
  gateways = await startSessionGateways(bed);
  await giveAliceHerOwnCredits();
  browser = await launchBrowser();
});

/** As `npm start`'s demo does: 25 of the organization's credits in the member's own wallet, which her
 * sessions draw on first and which the header shows her (a member does not see the organization's). */
async function giveAliceHerOwnCredits(): Promise<void> {
  const api = bedApi(bed, bed.orgAdmin);
  const opened = await api.call("openWallet", {
    body: { organization_id: bed.org.id, owner_kind: "user", owner_id: bed.alice.id },
  });
  const orgs = await api.call("listWallets", { query: { organization: bed.org.id, owner_kind: "organization" } });
  const from = orgs.data[0]?.id;
  if (!from) throw new Error("the organization has no wallet to allocate from");
  await api.call("allocateCredits", {
    body: { from_wallet_id: from, to_wallet_id: opened.id, amount: "25000000", reason: "the milestone journey" },
  });
}
afterEach(async (ctx) => shots.onFailure(page, ctx));
afterAll(async () => {
  await closeContexts([context]);
  await closeBrowser(browser);
  await gateways?.stop();
  await bed?.stop();
});

describe("a member starts an H100 session, opens its notebook through the gateway and pauses it", () => {
  let sessionId = "";
  let balanceBefore = 0n;
  let runningSince = 0;

  it("signs in and sees the balance in the header", async () => {
    context = await newContext(browser as Browser, bed.t.api.url);
    page = await context.newPage();
    const login = new LoginPage(page);
    await login.open();
    await login.signIn(bed.alice.email, bed.alice.password);
    await new Shell(page).signedIn();
    const header = new CreditsPages(page).headerBalance();
    await header.waitFor();
    await expect.poll(() => header.getAttribute("data-own")).toBe("true");
    balanceBefore = BigInt((await header.getAttribute("data-units")) ?? "0");
    expect(balanceBefore).toBe(25_000_000n);
    expect(await new CreditsPages(page).headerAmount()).toBe("25.00");
  });

  it("starts an H100 session in the wizard and watches it become Running without a reload", async () => {
    const p = page as Page;
    const wizard = new NewSessionPage(p);
    await wizard.open();
    await wizard.chooseOffering("h100");
    await wizard.gpuNow().waitFor();
    expect(await wizard.createButton().isEnabled()).toBe(true);
    await shots.take(p, "wizard-h100");
    await expectAccessible(p);
    await p.evaluate(() => {
      (window as unknown as { __noReload: boolean }).__noReload = true;
    });
    sessionId = await wizard.create("milestone");
    const detail = new SessionPage(p);
    await detail.waitForPhase("Running", 60_000);
    runningSince = Date.now();
    expect(await p.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
    expect(await detail.node().textContent()).toBe("gpu-a-1");
    await shots.take(p, "running");
    await expectAccessible(p);
  });

  it("Open notebook opens a new tab on the stand-in JupyterLab through gpu-a's gateway", async () => {
    const p = page as Page;
    const cr = (await bedApi(bed, bed.alice).call("getSession", { params: { sessionId } })).resource_name;
    const tab = await new SessionPage(p).connect("lab");
    // The gateway redeems the one-use token for its cookie and redirects to the clean URL.
    await tab.waitForURL((u) => u.pathname === `/proxy/${cr}/lab` && !u.searchParams.has("svc_cnx"), {
      timeout: 30_000,
    });
    const url = new URL(tab.url());
    expect(url.protocol).toBe("https:");
    expect(url.host).toBe(`127.0.0.1:${gateways?.byCluster.get("gpu-a")?.port}`);
    const standIn = new StandInApp(tab);
    const app = standIn.root();
    await app.waitFor();
    expect(await app.getAttribute("data-cr")).toBe(cr);
    expect(await standIn.title()).toBe("JupyterLab");
    await expect.poll(() => standIn.wsEcho()).toBe("echo: ping");
    await shots.take(tab, "notebook-through-the-gateway");
    await tab.close();
    await p.bringToFront();
  });

  it("back in the console, pauses after confirming: Paused, and the header's balance drops by the charge", async () => {
    const p = page as Page;
    const detail = new SessionPage(p);
    await detail.waitForPhase("Running");
    await detail.actButton("pause").click();
    const shell = new Shell(p);
    const dialog = shell.confirmDialog();
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain("Billing stops and the GPU is returned");
    await shots.take(p, "pause-confirm");
    await expectAccessible(p);
    await shell.confirmOk().click();
    const pausedAt = Date.now();
    await detail.waitForPhase("Paused", 60_000);
    await shots.take(p, "paused");
    await expectAccessible(p);
    // The header reloads a moment after the stream says the session changed (and every 30 s).
    const header = new CreditsPages(p).headerBalance();
    await expect
      .poll(async () => BigInt((await header.getAttribute("data-units")) ?? "0"), { timeout: 60_000, interval: 500 })
      .toBeLessThan(balanceBefore);
    // The drop is the charge for the GPU seconds the operator reported, at 4 credits/h (exact, rounded
    // down: billing carries the remainder). The header catches up with a later sample, if any, by itself.
    const expected = async () => {
      const usage = await bedApi(bed, bed.alice).call("getSessionUsage", { params: { sessionId } });
      const ms = BigInt(Math.round(usage.totals.gpu_seconds * 1000));
      return (4_000_000n * ms) / 3_600_000n;
    };
    const shown = async () => balanceBefore - BigInt((await header.getAttribute("data-units")) ?? "0");
    await expect.poll(async () => (await expected()) - (await shown()), { timeout: 60_000, interval: 1000 }).toBe(0n);
    const charged = await shown();
    const ranMs = pausedAt - runningSince;
    // Not more than the time from Running to the pause click, plus the seconds the Running report and the deletion request take.
    expect(charged).toBeLessThanOrEqual((4_000_000n * BigInt(ranMs + 15_000)) / 3_600_000n);
    await shots.take(p, "balance-after-charge");
    console.log(`[milestone] charged ${charged} units for ${Math.round(ranMs / 1000)} s between Running and the pause`);
    expect(await p.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
  });
});
