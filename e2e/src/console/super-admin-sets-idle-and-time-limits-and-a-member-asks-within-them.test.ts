// Journey: idle and time limits per resource policy in the console, over the real API, Postgres and a real
// kube-apiserver (the bed's management cluster with the generated CRDs and the default catalog, which the
// API's credential may write, as in the limits journey). The platform's administrator opens
// /admin/idle-limits from the Admin menu, narrows the global policy's idle bounds and running time; an
// organization's administrator reads them, read-only (the API refuses a change); a member's new-session wizard then offers the idle
// timeout and running time within the new bounds and says what is wrong with an ask outside them.
// axe-core checks every page.

import type { IdentityTestApi, TestUser } from "@berth/api/testing";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { apiAs, refusalOf } from "../api-client.ts";
import { closeBrowser, expectAccessible, launchBrowser, PHONE, Screenshots } from "./browser.ts";
import { IdleLimitsPage } from "./pages/idle-limits-page.ts";
import { NewSessionPage } from "./pages/new-session-page.ts";
import { Visitors } from "./pages/visitors.ts";
import { acmeResearch, type CatalogStack, startCatalogStack } from "./stack.ts";

describe("the platform's administrator sets idle and time limits, and a member asks within them", () => {
  let stack: CatalogStack;
  let t: IdentityTestApi;
  let browser: Browser;
  const people = new Visitors(
    () => browser,
    () => t.api.url,
  );
  const shots = new Screenshots("idle-limits");
  let superAdmin: TestUser;
  let admin: TestUser;
  let alice: TestUser;

  async function openIdleLimits(page: Page): Promise<IdleLimitsPage> {
    const limits = new IdleLimitsPage(page);
    await limits.openFromMenu();
    return limits;
  }

  beforeAll(async () => {
    stack = await startCatalogStack();
    t = stack.t;
    ({ superAdmin, admin, alice } = await acmeResearch(t));
    browser = await launchBrowser();
  });
  afterEach(async (ctx) => shots.onFailure(people.current, ctx));
  afterAll(async () => {
    await people.closeAll();
    await closeBrowser(browser);
    await stack?.stop();
  });

  it("the member's wizard first offers the defaults: an idle timeout of 20 min to 8 h, 24 h of running", async () => {
    const page = await people.signIn(alice);
    await page.goto("/sessions/new");
    const wizard = new NewSessionPage(page);
    const policy = wizard.limitsPolicy();
    await expect.poll(() => policy.textContent()).toContain("between 20 min and 8 h");
    expect(await policy.textContent()).toContain("after 24 h of running");
    expect(await wizard.idleTimeout().getAttribute("placeholder")).toBe("60");
  });

  it("the platform's administrator narrows the global policy on /admin/idle-limits", async () => {
    const root = await people.signIn(superAdmin);
    const limits = await openIdleLimits(root);
    await shots.take(root, "idle-limits");
    await expectAccessible(root);
    await limits.save("global", { min_timeout_minutes: "30", max_timeout_minutes: "120", max_session_hours: "8" });
    await expect.poll(() => limits.notice().textContent()).toBe("Saved global.");
    const global = await apiAs(t.api.url, superAdmin.token).call("getResourcePolicy", { params: { name: "global" } });
    expect(global.idle).toMatchObject({ min_timeout_minutes: 30, max_timeout_minutes: 120 });
    // The other limits of the policy are kept.
    expect(global.limits).toMatchObject({ max_gpus_per_user: 4, max_session_hours: 8 });
    await shots.take(root, "idle-limits-saved");
  });

  it("a timeout outside the policy's own bounds is refused, the reason in the page", async () => {
    const root = people.current as Page;
    const limits = new IdleLimitsPage(root);
    await limits.save("global", { timeout_minutes: "600" });
    await limits.shell.errorPanel().waitFor();
    expect(await limits.shell.errorPanel().getAttribute("data-code")).toBe("validation_failed");
    await shots.take(root, "idle-limits-refused");
    await expectAccessible(root);
    const global = await apiAs(t.api.url, superAdmin.token).call("getResourcePolicy", { params: { name: "global" } });
    expect(global.idle?.timeout_minutes).not.toBe(600);
  });

  it("an organization's administrator reads the page on a phone, read-only, and the API refuses a change", async () => {
    const page = await people.signIn(admin, { viewport: PHONE });
    const limits = await openIdleLimits(page);
    await limits.readOnly().waitFor();
    expect(await limits.saveButton("global").count()).toBe(0);
    expect(await limits.field("global", "min_timeout_minutes").inputValue()).toBe("30");
    expect(await limits.field("global", "min_timeout_minutes").getAttribute("readonly")).not.toBeNull();
    await shots.take(page, "idle-limits-org-admin-phone");
    await expectAccessible(page);
    const r = await refusalOf(
      apiAs(t.api.url, admin.token).call("updateResourcePolicy", {
        params: { name: "global" },
        body: { idle: { keep_running_max: 9 } },
      }),
    );
    expect(r.status).toBe(403);
    expect(r.code).toBe("forbidden");
  });

  it("the member's wizard offers the new bounds and says what is wrong with an ask outside them", async () => {
    const page = await people.signIn(alice);
    await page.goto("/sessions/new");
    const wizard = new NewSessionPage(page);
    const policy = wizard.limitsPolicy();
    await expect.poll(() => policy.textContent()).toContain("between 30 min and 2 h");
    expect(await policy.textContent()).toContain("after 8 h of running");
    await wizard.askLimits("10", "12");
    expect(await wizard.idleTimeoutProblem().textContent()).toBe(
      "Your resource policy allows an idle timeout between 30 min and 2 h.",
    );
    expect(await wizard.maxRuntimeProblem().textContent()).toBe(
      "Your resource policy allows at most 8 h of running time.",
    );
    expect(await wizard.createButton().isDisabled()).toBe(true);
    await shots.take(page, "wizard-out-of-bounds");
    await expectAccessible(page);
    await wizard.askLimits("45", "4");
    await expect.poll(() => wizard.idleTimeoutProblem().count()).toBe(0);
    expect(await wizard.maxRuntimeProblem().count()).toBe(0);
    await shots.take(page, "wizard-within-bounds");
  });
});
