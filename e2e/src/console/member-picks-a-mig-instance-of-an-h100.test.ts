// A member on a cluster whose H100 node an administrator marked as MIG-partitioned (docs/dev/gpu-sharing.md)
// sees the node's MIG profiles in the wizard's GPU step, with their share of the card, price and free
// instances; a profile the node does not advertise is not offered. The 3g.40gb session runs.
import { ensureConsoleBuilt } from "@berth/console";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { gpuCluster, H100, MANAGEMENT, type SessionsBed, startSessionsBed } from "../sessions/harness.ts";
import { closeBrowser, closeContexts, expectAccessible, launchBrowser, newContext, Screenshots } from "./browser.ts";
import { LoginPage } from "./pages/login-page.ts";
import { NewSessionPage, SessionPage } from "./pages/sessions-pages.ts";
import { Shell } from "./pages/shell.ts";

vi.setConfig({ testTimeout: 180_000 });

let bed: SessionsBed;
let browser: Browser;
let context: BrowserContext | undefined;
let page: Page | undefined;
const shots = new Screenshots("member-mig");
const LAYOUT = { "3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2 };

beforeAll(async () => {
  ensureConsoleBuilt();
  bed = await startSessionsBed({
    fleet: {
      clusters: [
        MANAGEMENT,
        gpuCluster("gpu-a", [
          { name: "gpu-a-mig", gpuModel: H100, gpuCount: 2, mig: LAYOUT, labels: { "berth.dev/mig": "mixed" } },
        ]),
      ],
    },
  });
  const r = await bed.call(bed.superAdmin, "POST", `/api/v1/clusters/${bed.gpu["gpu-a"]?.id}/mig-layouts`, {
    selector: "berth.dev/mig=mixed",
    gpu_model: H100,
    profiles: LAYOUT,
  });
  if (r.status !== 201) throw new Error(`marking the node answered ${r.status}: ${JSON.stringify(r.body)}`);
  browser = await launchBrowser();
});
afterEach(async (ctx) => shots.onFailure(page, ctx));
afterAll(async () => {
  await closeContexts([context]);
  await closeBrowser(browser);
  await bed?.stop();
});

describe("a member on a cluster with a MIG-partitioned H100 node", () => {
  it("picks the 3g.40gb profile with its share and price; a profile the node lacks is not offered", async () => {
    context = await newContext(browser, bed.t.api.url);
    page = await context.newPage();
    const login = new LoginPage(page);
    await login.open();
    await login.signIn(bed.alice.email, bed.alice.password);
    await new Shell(page).signedIn();

    const wizard = new NewSessionPage(page);
    await wizard.open();
    await expect.poll(() => wizard.freeText("h100-mig-3g-40gb")).toContain("2 MIG 3g.40gb instances free now");
    expect(await wizard.tierText("h100-mig-3g-40gb")).toContain(`MIG 3g.40gb of ${H100} · 1/2 of the card`);
    expect(await wizard.tierText("h100-mig-1g-10gb")).toContain("1/7 of the card");
    // Not in the layout: not offered.
    expect(await wizard.offering("h100-mig-4g-40gb").count()).toBe(0);
    await wizard.chooseOffering("h100-mig-3g-40gb");
    await expect.poll(async () => wizard.costTotal().textContent()).toContain("2.00 credits");
    await shots.take(page, "wizard-mig-profiles");
    await expectAccessible(page);

    await wizard.create("half-card");
    const detail = new SessionPage(page);
    await detail.waitForPhase("Running", 60_000);
    expect(await detail.gpu()).toContain(`MIG 3g.40gb of ${H100}`);
    await shots.take(page, "running-mig");
  });
});
