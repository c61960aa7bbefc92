// A member on a HAMi cluster (docs/dev/gpu-sharing.md) picks the 1/8 H100 tier in the wizard, where it
// shows the GPU memory a slice guarantees, its price and how many eighths are free; the session runs and
// its page names the card it holds.
import { ensureConsoleBuilt } from "@berth/console";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { gpuCluster, H100, MANAGEMENT, type SessionsBed, startSessionsBed } from "../sessions/harness.ts";
import { cardUuid } from "../testbed/gpu.ts";
import { closeBrowser, closeContexts, expectAccessible, launchBrowser, newContext, Screenshots } from "./browser.ts";
import { LoginPage } from "./pages/login-page.ts";
import { NewSessionPage } from "./pages/new-session-page.ts";
import { SessionPage } from "./pages/session-page.ts";
import { Shell } from "./pages/shell.ts";

vi.setConfig({ testTimeout: 180_000 });

let bed: SessionsBed;
let browser: Browser;
let context: BrowserContext | undefined;
let page: Page | undefined;
const shots = new Screenshots("member-slices");

beforeAll(async () => {
  ensureConsoleBuilt();
  bed = await startSessionsBed({
    fleet: {
      clusters: [MANAGEMENT, gpuCluster("gpu-a", [{ name: "gpu-a-1", gpuModel: H100, gpuCount: 2, sharing: "hami" }])],
    },
  });
  browser = await launchBrowser();
});
afterEach(async (ctx) => shots.onFailure(page, ctx));
afterAll(async () => {
  await closeContexts([context]);
  await closeBrowser(browser);
  await bed?.stop();
});

describe("a member on a cluster with a GPU sharing layer", () => {
  it("picks the 1/8 tier with its memory and price, and sees the card the session holds", async () => {
    context = await newContext(browser, bed.t.api.url);
    page = await context.newPage();
    const login = new LoginPage(page);
    await login.open();
    await login.signIn(bed.alice.email, bed.alice.password);
    await new Shell(page).signedIn();

    const wizard = new NewSessionPage(page);
    await wizard.open();
    expect(await wizard.tierText("h100-1-8")).toContain(`1/8 of ${H100} · 10.0 GiB GPU memory`);
    expect(await wizard.tierText("h100")).toContain(`1 × ${H100}`);
    // Two cards: sixteen eighths free, and the price of the tier itself.
    await expect.poll(() => wizard.freeText("h100-1-8")).toContain("16 of 16 1/8 slices free now");
    await wizard.chooseOffering("h100-1-8");
    await expect.poll(() => wizard.costTotal().textContent()).toContain("0.60 credits");
    await expectAccessible(page);

    await wizard.create("eighth");
    const detail = new SessionPage(page);
    await detail.waitForPhase("Running", 60_000);
    expect(await detail.gpu()).toContain(`1/8 of ${H100}`);
    expect(await detail.cards()).toBe(cardUuid("gpu-a-1", 0));
    await shots.take(page, "running-slice");
    await expectAccessible(page);
  });
});
