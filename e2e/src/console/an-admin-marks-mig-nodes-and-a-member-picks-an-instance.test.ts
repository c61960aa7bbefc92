// A super_admin marks a cluster's H100 node as MIG-partitioned on the cluster's page (docs/dev/gpu-sharing.md):
// a malformed layout is refused in the form, one that over-fills the card and one overlapping the mark by the
// API, each in words. A member then sees the node's MIG profiles in the wizard's GPU step, with their share
// of the card, price and free instances; a profile the node does not advertise is not offered. The 3g.40gb
// session runs.
import { ensureConsoleBuilt } from "@berth/console";
import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { gpuCluster, H100, MANAGEMENT, type SessionsBed, startSessionsBed } from "../sessions/harness.ts";
import { closeBrowser, expectAccessible, launchBrowser, Screenshots } from "./browser.ts";
import { ClustersPage } from "./pages/clusters-page.ts";
import { MigLayoutsSection } from "./pages/mig-layouts-section.ts";
import { NewSessionPage } from "./pages/new-session-page.ts";
import { SessionPage } from "./pages/session-page.ts";
import { Visitors } from "./pages/visitors.ts";

vi.setConfig({ testTimeout: 180_000 });

let bed: SessionsBed;
let browser: Browser;
const people = new Visitors(
  () => browser,
  () => bed.t.api.url,
);
const shots = new Screenshots("mig");
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
  browser = await launchBrowser();
});
afterEach(async (ctx) => shots.onFailure(people.current, ctx));
afterAll(async () => {
  await people.closeAll();
  await closeBrowser(browser);
  await bed?.stop();
});

describe("an H100 node marked as MIG-partitioned", () => {
  it("a super_admin marks it on the cluster's page; bad layouts are refused in words", async () => {
    const page = await people.signIn(bed.superAdmin);
    const clusters = new ClustersPage(page);
    await clusters.open();
    await clusters.openCluster("gpu-a");
    const mig = new MigLayoutsSection(page);
    await mig.ready();
    await mig.noneMarked().waitFor();

    // The form's own check: nothing is sent.
    await mig.mark({ gpuModel: H100, selector: "berth.dev/mig=mixed", profiles: "3g.40gb" });
    await expect.poll(() => mig.formError().textContent()).toContain("is not profile=instances");
    // The API's: more than one card holds.
    await mig.mark({ gpuModel: H100, selector: "berth.dev/mig=mixed", profiles: "3g.40gb=2, 1g.10gb=1" });
    await mig.error(/9 of 8 memory slices/).waitFor();
    await shots.take(page, "over-full-refused");

    await mig.mark({ gpuModel: H100, selector: "berth.dev/mig=mixed", profiles: "3g.40gb=1, 2g.20gb=1, 1g.10gb=2" });
    await mig.notice().waitFor();
    expect(await mig.notice().textContent()).toContain("Marked 1 node(s)");
    await mig.row("berth.dev/mig=mixed").waitFor();
    expect(await mig.nodesOf("berth.dev/mig=mixed")).toBe("gpu-a-mig: 3g.40gb × 2, 2g.20gb × 2, 1g.10gb × 4");
    expect(await mig.row("berth.dev/mig=mixed").innerText()).toContain("3g.40gb × 1, 2g.20gb × 1, 1g.10gb × 2");

    // A second mark over the same node is refused, naming the node.
    await mig.mark({ gpuModel: H100, selector: "berth.dev/mig in (mixed,all)", profiles: "7g.80gb=1" });
    await mig.error(/the layout berth.dev\/mig=mixed already marks .* \(gpu-a-mig\)/).waitFor();
    expect(await mig.rows().count()).toBe(1);
    await shots.take(page, "marked");
    await expectAccessible(page);
  });

  it("a member picks the 3g.40gb profile with its share and price; a profile the node lacks is not offered", async () => {
    const page = await people.signIn(bed.alice);
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
