// A member opts in to borrowed capacity in the wizard (docs/dev/fair-share.md): the Capacity step says what
// borrowing costs (0.3 of the rate) and what it risks (warning, pause, resume ahead of new work) before
// launch, and the session's page names its class and reclaim notice once it runs.
import { ensureConsoleBuilt } from "@berth/console";
import { HttpKube } from "@berth/controllers/kube";
import { OfferingKind, resourcePath } from "@berth/crds";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import { type SessionsBed, startSessionsBed } from "../sessions/harness.ts";
import { kubeConfigFrom } from "../testbed/kubeconfig.ts";
import { closeBrowser, closeContexts, expectAccessible, launchBrowser, newContext, Screenshots } from "./browser.ts";
import { LoginPage } from "./pages/login-page.ts";
import { NewSessionPage } from "./pages/new-session-page.ts";
import { SessionPage } from "./pages/session-page.ts";
import { Shell } from "./pages/shell.ts";

vi.setConfig({ testTimeout: 300_000 });

let bed: SessionsBed;
let browser: Browser;
let context: BrowserContext | undefined;
let page: Page | undefined;
const shots = new Screenshots("member-borrows");

beforeAll(async () => {
  ensureConsoleBuilt();
  bed = await startSessionsBed({ workerCapacityReclaim: false });
  // The administrator prices borrowed H100 time at 0.3 of the rate (as kubectl would; the bed's API has no
  // catalog writes).
  const admin = new HttpKube(kubeConfigFrom(bed.fleet.cluster("mgmt").kubeconfig));
  const r = await admin.request("PATCH", resourcePath(OfferingKind, { name: "h100" }), {
    body: { spec: { borrowedRatePermille: 300 } },
  });
  admin.close();
  if (r.status !== 200) throw new Error(`pricing borrowed h100: ${r.status}`);
  browser = await launchBrowser();
});
afterEach(async (ctx) => shots.onFailure(page, ctx));
afterAll(async () => {
  await closeContexts([context]);
  await closeBrowser(browser);
  await bed?.stop();
});

describe("a member who borrows idle GPUs", () => {
  it("sees the borrowed rate and the reclaim terms before launch, and the class on the session's page", async () => {
    context = await newContext(browser, bed.t.api.url);
    page = await context.newPage();
    const login = new LoginPage(page);
    await login.open();
    await login.signIn(bed.alice.email, bed.alice.password);
    await new Shell(page).signedIn();

    const wizard = new NewSessionPage(page);
    await wizard.open();
    await wizard.chooseOffering("h100");
    await wizard.chooseCapacity("borrowed");
    await expect
      .poll(async () => (await wizard.reclaimTerms().textContent()) ?? "", { timeout: 30_000 })
      .toContain("0.3×");
    expect(await wizard.reclaimTerms().textContent()).toContain("paused");
    await expect.poll(async () => wizard.rateClass().textContent()).toContain("borrowed rate");
    await shots.take(page, "wizard-borrowed");
    await expectAccessible(page);

    const id = await wizard.create("borrowed-notebook");
    const detail = new SessionPage(page);
    await detail.waitForPhase("Running", 120_000);
    expect(await detail.capacityClass()).toBe("borrowed");
    expect(await detail.reclaimNotice().textContent()).toContain("guaranteed session");
    await shots.take(page, "session-borrowed");
    await expectAccessible(page);
    expect((await bedApi(bed, bed.alice).call("getSession", { params: { sessionId: id } })).rate_multiplier).toBe(0.3);
  });
});
