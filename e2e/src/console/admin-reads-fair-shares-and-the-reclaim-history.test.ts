// biome-ignore-all lint/suspicious/noExplicitAny: journeys read the API's JSON as it comes
// An organization's administrator reads fair share in the console (docs/dev/fair-share.md): first nothing
// guaranteed, held or reclaimed; then, with the organization guaranteed one of the bed's two H100s, Bob
// borrows both in project Vision, Alice's guaranteed session waits, and the reclaim loop (its passes in
// the test's hand, 0-second grace) warns and pauses Bob's newest. The page shows the organization, the
// project and both users per GPU model (guaranteed, in use, borrowed) and the reclaim: whose session, for
// whom, warned and paused. Bob's pages say his borrowed session is charged at the borrowed rate and was
// paused to give its GPU back.
import { capacityReclaimWorkerLoop } from "@berth/api";
import { ensureConsoleBuilt } from "@berth/console";
import { HttpKube } from "@berth/controllers/kube";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { bedApi } from "../api-client.ts";
import { H100, type SessionsBed, startSessionsBed } from "../sessions/harness.ts";
import { closeBrowser, closeContexts, expectAccessible, launchBrowser, newContext, Screenshots } from "./browser.ts";
import { FairSharePage } from "./pages/fair-share-page.ts";
import { LoginPage } from "./pages/login-page.ts";
import { SessionPage } from "./pages/session-page.ts";
import { Shell } from "./pages/shell.ts";

vi.setConfig({ testTimeout: 600_000 });

let bed: SessionsBed;
let kube: HttpKube;
let browser: Browser;
let admin: { context: BrowserContext; page: Page } | undefined;
let bobs: { context: BrowserContext; page: Page } | undefined;
let project: { id: string };
const shots = new Screenshots("admin-reads-fair-shares-and-the-reclaim-history");
const h100 = { offering: "h100", preset: "gpu-small", image: "jupyterlab" };

async function signedIn(user: { email: string; password: string }) {
  const context = await newContext(browser, bed.t.api.url);
  const page = await context.newPage();
  const login = new LoginPage(page);
  await login.open();
  await login.signIn(user.email, user.password);
  await new Shell(page).signedIn();
  return { context, page };
}

beforeAll(async () => {
  ensureConsoleBuilt();
  bed = await startSessionsBed({ workerCapacityReclaim: false });
  kube = new HttpKube(bed.workerKubeConfig, { userAgent: "berth-worker" });
  project = await bed.t.aProject(bed.org.id, "Vision");
  await bed.t.member(bed.alice, bed.org.id, project.id, "member");
  await bed.t.member(bed.bob, bed.org.id, project.id, "member");
  browser = await launchBrowser();
});
afterEach(async (ctx) => shots.onFailure(admin?.page, ctx));
afterAll(async () => {
  await closeContexts([admin?.context, bobs?.context]);
  await closeBrowser(browser);
  kube?.close();
  await bed?.stop();
});

describe("an administrator reads fair share", () => {
  it("sees the organization with nothing guaranteed or held, and no reclaim yet", async () => {
    admin = await signedIn(bed.orgAdmin);
    const fair = new FairSharePage(admin.page);
    await fair.openFromMenu();
    await fair.organizations().first().waitFor();
    expect(await fair.rows()).toEqual([
      { level: "organization", id: bed.org.id, model: "", guaranteed: 0, used: 0, borrowed: 0, lent: 0 },
      { level: "project", id: project.id, model: "", guaranteed: 0, used: 0, borrowed: 0, lent: 0 },
    ]);
    await expect.poll(() => fair.emptyHeadings()).toEqual(["No reclaim yet"]);
    await shots.take(admin.page, "empty");
    await expectAccessible(admin.page);
  });

  it("sees the guarantee, what each project and user holds, and who was reclaimed for whom", async () => {
    await bed.writeOrganizationPolicy("journey-fair-share", {
      fairShare: {
        guarantees: [{ gpuModel: H100, gpus: 1, borrowingLimit: 3 }],
        reclaimGraceSeconds: 0,
        minRuntimeSeconds: 0,
      },
    });
    const loop = capacityReclaimWorkerLoop({ db: bed.workerDb, kube, log: bed.t.deps.log });

    const inVision = { ...h100, project_id: project.id };
    const b1 = await bed.startRunning(bed.bob, { ...inVision, name: "b1", capacity_class: "borrowed" });
    const b2 = await bed.startRunning(bed.bob, { ...inVision, name: "b2", capacity_class: "borrowed" });
    const g = await bedApi(bed, bed.alice).call("createSession", { body: { ...inVision, name: "g" } });
    await bed.waitFor(bed.alice, g.id, (s) => s.phase === "Queued", "guaranteed session Queued");
    expect((await loop.pass()).warned).toEqual([{ session: b2.id, for: g.id }]);
    expect((await loop.pass()).paused).toEqual([b2.id]);
    await bed.waitFor(bed.bob, b2.id, (s) => s.phase === "Paused", "borrowed session Paused");
    await bed.waitFor(bed.alice, g.id, (s) => s.phase === "Running", "guaranteed session Running");
    // The pass after the pause records it on the notice and asks the session to run again.
    expect((await loop.pass()).requeued).toEqual([b2.id]);

    const fair = new FairSharePage((admin as { page: Page }).page);
    const byKey = async () => Object.fromEntries((await fair.rows()).map((r) => [`${r.level}:${r.id}`, r]));
    // Each look loads the page again: the API reads the catalog's policies through a 5-second cache, and on a
    // quiet machine all of the above fits in it (the policy written just now not yet seen).
    await expect
      .poll(
        async () => {
          await fair.reload();
          return (await byKey())[`organization:${bed.org.id}`];
        },
        { timeout: 30_000, interval: 1_000 },
      )
      .toEqual({ level: "organization", id: bed.org.id, model: H100, guaranteed: 1, used: 1, borrowed: 1, lent: 0 });
    const rows = await byKey();
    expect(rows[`project:${project.id}`]).toMatchObject({ model: H100, guaranteed: 0, used: 1, borrowed: 1 });
    expect(rows[`user:${bed.alice.id}`]).toMatchObject({ model: H100, used: 1, borrowed: 0 });
    expect(rows[`user:${bed.bob.id}`]).toMatchObject({ model: H100, used: 0, borrowed: 1 });
    const reclaims = await fair.reclaims();
    expect(reclaims).toEqual([{ session: b2.id, for: g.id, state: "paused", text: expect.stringContaining("active") }]);
    expect(reclaims[0]?.text).toContain(bed.bob.email);
    expect(await fair.emptyHeadings()).toEqual([]);
    await shots.take(fair.page, "with-data");
    await expectAccessible(fair.page);

    // Bob's pages: the borrowed rate applies, and the reclaimed session says why it was paused.
    bobs = await signedIn(bed.bob);
    const running = new SessionPage(bobs.page);
    await running.open(b1.id);
    expect(await running.capacityClass()).toBe("borrowed");
    expect(await running.capacityText()).toContain("borrowed rate");
    await expect.poll(() => running.timelineText(), { timeout: 30_000 }).toContain("charged at the borrowed rate");
    expect(await running.timelineText()).not.toContain("at the offering's rate");
    await running.open(b2.id);
    await expect
      .poll(async () => (await running.reclaimPaused().textContent()) ?? "", { timeout: 30_000 })
      .toContain("to give its borrowed GPU back");
    await shots.take(bobs.page, "reclaimed-session");
  });
});
