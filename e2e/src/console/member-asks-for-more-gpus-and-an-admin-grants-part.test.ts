// Journey: limits and the catalog in the console, over the real API, Postgres and a real kube-apiserver
// (the bed's management cluster with the generated CRDs and the default catalog). A member reads her
// limits (4 GPUs, from the global policy) and asks for 8 with a reason, by keyboard; her organization's
// administrator finds it in the inbox and grants 6 with a note; her Limits page then says 6, from the
// policy the approval wrote. The platform's administrator reads and changes the catalog (offerings by
// tier, presets, images, policies, build clusters). The wizard opens on an offering with GPUs free: the
// inventory rows an operator would report are written directly (no GPU cluster runs in this journey).
// axe-core checks every new page.

import type { IdentityTestApi, TestUser } from "@berth/api/testing";
import { clustersOf, installBuildsOn } from "@berth/api/testing";
import type { HttpKube } from "@berth/controllers/kube";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { apiAs } from "../api-client.ts";
import type { Fleet } from "../index.ts";
import { closeBrowser, DESKTOP, expectAccessible, launchBrowser, PHONE, Screenshots } from "./browser.ts";
import { CatalogPage } from "./pages/catalog-page.ts";
import { LimitsPage } from "./pages/limits-page.ts";
import { NewSessionPage } from "./pages/new-session-page.ts";
import { QuotaInboxPage } from "./pages/quota-inbox-page.ts";
import { Visitors } from "./pages/visitors.ts";
import { acmeResearch, type CatalogStack, startCatalogStack } from "./stack.ts";

describe("a member asks for more GPUs and an administrator grants part of it, in the console", () => {
  let stack: CatalogStack;
  let fleet: Fleet;
  let kube: HttpKube;
  let t: IdentityTestApi;
  let browser: Browser;
  const people = new Visitors(
    () => browser,
    () => t.api.url,
  );
  const shots = new Screenshots("limits");
  let superAdmin: TestUser;
  let admin: TestUser;
  let alice: TestUser;
  let alicePage: Page;
  let adminPage: Page;
  let requestId: string;

  beforeAll(async () => {
    stack = await startCatalogStack();
    ({ fleet, kube, t } = stack);
    ({ superAdmin, admin, alice } = await acmeResearch(t));
    // A GPU cluster's inventory as its operator reports it: the A100s all busy, L4s free.
    const db = t.database.db;
    await db("clusters").insert({ id: "clu_journey", name: "gpu-east", session_domain: "east.example.test" });
    // Its registered credential and the operator's install for builds (the bed's one cluster stands in),
    // which marking it for builds checks.
    const mgmt = fleet.cluster("mgmt");
    const store = clustersOf(t.deps).store;
    const secretRef = await store.createCredentialSecret("clu_journey", {
      server: mgmt.server,
      caPem: mgmt.caPem,
      token: mgmt.adminToken,
    });
    await store.createCluster({ id: "clu_journey", name: "gpu-east", sessionDomain: "east.example.test", secretRef });
    await installBuildsOn(kube, "berth-builds");
    const node = (name: string, model: string, count: number, inUse: number) => ({
      cluster_id: "clu_journey",
      name,
      gpu_model: model,
      gpu_count: count,
      gpu_allocatable: count,
      gpu_in_use: inUse,
      schedulable: true,
      ready: true,
      observed_at: new Date(),
    });
    await db("cluster_nodes").insert([
      node("east-a100-1", "NVIDIA-A100-SXM4-80GB", 4, 4),
      node("east-l4-1", "NVIDIA-L4", 4, 1),
    ]);
    browser = await launchBrowser();
  });
  afterEach(async (ctx) => shots.onFailure(people.current, ctx));
  afterAll(async () => {
    await people.closeAll();
    await closeBrowser(browser);
    await stack?.stop();
  });

  it("the member reads her limits: 4 GPUs at once, from the global policy", async () => {
    alicePage = await people.signIn(alice);
    const limits = new LimitsPage(alicePage);
    await limits.openFromNavigation();
    await limits.limit("max_gpus_per_user").waitFor();
    expect(await limits.limitValue("max_gpus_per_user")).toBe("4");
    expect(await limits.limitPolicy("max_gpus_per_user")).toContain("global");
    await limits.shell.emptyState().waitFor(); // no request yet
    await shots.take(alicePage, "member-limits");
    await expectAccessible(alicePage);
  });

  it("she asks for 8 GPUs with a reason, by keyboard; asking for no more than she has is refused first", async () => {
    const limits = new LimitsPage(alicePage);
    await limits.askMore("max_gpus_per_user");
    const value = limits.askValue();
    await expect.poll(() => value.inputValue()).toBe("5");
    await value.fill("3");
    await limits.send();
    await limits.askProblem().waitFor();
    await value.fill("");
    await value.focus();
    await alicePage.keyboard.type("8");
    await alicePage.keyboard.press("Tab");
    await alicePage.keyboard.type("a sweep over eight seeds for the paper");
    await alicePage.keyboard.press("Tab");
    await alicePage.keyboard.press("Enter");
    await expect.poll(() => limits.shell.notice().textContent()).toMatch(/GPUs at once, per person: 8 was sent/);
    const row = limits.firstRequest();
    await row.waitFor();
    expect(await row.getAttribute("data-status")).toBe("pending");
    requestId = (await row.getAttribute("data-request-id")) as string;
    expect(requestId).toMatch(/^qrq_/);
    await shots.take(alicePage, "member-asked");
    await expectAccessible(alicePage);
  });

  it("her administrator finds it in the inbox and grants 6 of the 8 with a note", async () => {
    adminPage = await people.signIn(admin);
    const limits = new LimitsPage(adminPage);
    await limits.openFromNavigation();
    await limits.openInbox();
    const inbox = new QuotaInboxPage(adminPage);
    const row = inbox.row(requestId);
    await row.waitFor();
    expect(await row.textContent()).toContain("a sweep over eight seeds");
    expect(await row.textContent()).toContain(alice.email);
    await shots.take(adminPage, "inbox");
    await expectAccessible(adminPage);
    await inbox.decide(requestId);
    // More than asked is refused in the page, before the API.
    await inbox.grant("max_gpus_per_user", "9");
    await inbox.approve();
    await inbox.grantProblem().waitFor();
    await inbox.grant("max_gpus_per_user", "6");
    await inbox.note("six now, more after the deadline");
    await shots.take(adminPage, "decide");
    await expectAccessible(adminPage);
    await inbox.approve();
    await expect.poll(() => limits.shell.notice().textContent()).toMatch(/Partly approved .* policy user-/);
    await inbox.filterStatus("any");
    await expect.poll(() => row.getAttribute("data-status")).toBe("partially_approved");
    await shots.take(adminPage, "decided");
    await adminPage.setViewportSize(PHONE);
    await shots.take(adminPage, "decided-phone");
    await expectAccessible(adminPage);
    await adminPage.setViewportSize(DESKTOP);
  });

  it("her Limits page says 6 GPUs, from the policy the approval wrote, and the bell told her", async () => {
    // Her account answers after the page's code has loaded (a slow API), first with a failure: the page
    // waits for it, says it did not load and offers a retry; it never decides from no account that she
    // belongs to no organization.
    let asked = 0;
    await alicePage.route("**/api/v1/auth/me", async (route) => {
      await new Promise((r) => setTimeout(r, 1000));
      if (++asked > 1) return route.continue();
      const error = { code: "unavailable", message: "The database is not answering.", details: {} };
      return route.fulfill({ status: 503, contentType: "application/json", body: JSON.stringify({ error }) });
    });
    const limits = new LimitsPage(alicePage);
    await alicePage.reload();
    await limits.shell.accountPending().waitFor();
    await limits.shell.accountRetry().waitFor();
    await limits.shell.accountErrorSays("The database is not answering.");
    await shots.take(alicePage, "account-did-not-load");
    await expectAccessible(alicePage, "account-error");
    await limits.shell.accountRetry().click();
    await limits.shell.accountPending().waitFor(); // the retry is under way (its answer comes late too)
    await limits.limit("max_gpus_per_user").waitFor();
    expect(await limits.shell.accountError().count()).toBe(0);
    await alicePage.unroute("**/api/v1/auth/me");
    await expect.poll(() => limits.limitValue("max_gpus_per_user")).toBe("6");
    expect(await limits.limitPolicy("max_gpus_per_user")).toMatch(/user-usr-/);
    const row = limits.request(requestId);
    expect(await limits.requestStatus(requestId)).toBe("Partly approved");
    expect(await row.textContent()).toContain("granted 6");
    expect(await row.textContent()).toContain("six now, more after the deadline");
    const bell = await apiAs(t.api.url, alice.token).call("listNotifications", {
      query: { kind: "quota.request_decided" },
    });
    expect(bell.data[0]?.title).toBe("Quota request partly approved");
    await shots.take(alicePage, "member-granted");
    await expectAccessible(alicePage);
  });

  it("the platform's administrator reads the offerings by tier and adds one", async () => {
    const root = await people.signIn(superAdmin);
    const catalog = new CatalogPage(root);
    await catalog.openFromMenu();
    await catalog.tier("premium").waitFor();
    // The test's three offerings and the default catalog's fractional ones, each slice named by its share.
    const offerings = await apiAs(t.api.url, superAdmin.token).call("listOfferings", { query: { size: 100 } });
    expect(await catalog.offeringRows().count()).toBe(offerings.data.length);
    const slice = offerings.data.find((o) => o.fraction === "1/8");
    if (slice) expect(await catalog.offeringShare(slice.name)).toContain("1/8 card");
    await shots.take(root, "catalog-offerings");
    await expectAccessible(root);
    await catalog.newButton().click();
    await catalog.fill({ name: "b200", display_name: "NVIDIA B200", gpu_model: "NVIDIA-B200", tier: "frontier" });
    await catalog.save();
    // The rate is required: the page says so before the API.
    await catalog.fieldProblem().waitFor();
    await catalog.fill({ hourly_credit_rate: "9.5" });
    await shots.take(root, "catalog-new-offering");
    await expectAccessible(root);
    await catalog.save();
    await expect.poll(() => catalog.shell.notice().textContent()).toContain("Created the offering b200");
    await catalog.tier("frontier").waitFor();
    await catalog.toggleOffering("b200");
    await expect.poll(() => catalog.shell.notice().textContent()).toContain("Disabled the offering b200");
    const b200 = await apiAs(t.api.url, superAdmin.token).call("getOffering", { params: { name: "b200" } });
    expect(b200).toMatchObject({ tier: "frontier", hourly_credit_rate: "9500000", enabled: false });
    // A duplicate name is the API's refusal, shown with its code.
    await catalog.newButton().click();
    await catalog.fill({ name: "b200", display_name: "again", gpu_model: "X", tier: "t", hourly_credit_rate: "1" });
    await catalog.save();
    await expect.poll(() => catalog.shell.errorPanel().getAttribute("data-code")).toBe("already_exists");
    people.current = root;
  });

  it("presets, images, policies (with the approval's) and build clusters each have their page", async () => {
    const root = people.current as Page;
    const catalog = new CatalogPage(root);
    for (const [tab, expectRow] of [
      ["presets", "gpu-small"],
      ["images", "jupyterlab"],
      ["policies", "global"],
      ["build-clusters", "gpu-east"],
    ] as const) {
      await catalog.tab(tab);
      await catalog.row(expectRow).waitFor();
      await shots.take(root, `catalog-${tab}`);
      await expectAccessible(root, tab);
    }
    // The super_admin marks a cluster for image builds, and the mark is the API's.
    await catalog.tab("build-clusters");
    await expect.poll(() => catalog.buildMark("gpu-east")).toBe("Not marked");
    await catalog.toggleBuildMark("gpu-east");
    await expect.poll(() => catalog.buildMark("gpu-east")).toBe("Marked");
    const marks = await apiAs(t.api.url, superAdmin.token).call("listBuildClusters");
    expect(marks.data).toHaveLength(1);
    await catalog.toggleBuildMark("gpu-east");
    await expect.poll(() => catalog.buildMark("gpu-east")).toBe("Not marked");
    // The policy the approval wrote is there, and the global one changes in place.
    await catalog.tab("policies");
    await catalog.rowStartingWith("user-usr-").waitFor();
    await catalog.edit("global");
    await catalog.fill({ max_session_hours: "72" });
    await catalog.save();
    await expect.poll(() => catalog.shell.notice().textContent()).toContain("Saved the resource policy global");
    const global = await apiAs(t.api.url, superAdmin.token).call("getResourcePolicy", { params: { name: "global" } });
    expect(global.limits).toMatchObject({ max_gpus_per_user: 4, max_session_hours: 72 });
  });

  it("an organization's administrator reads the catalog but is offered no change", async () => {
    const catalog = new CatalogPage(adminPage);
    await catalog.openFromMenu();
    await catalog.tier("premium").waitFor();
    expect(await catalog.newButton().count()).toBe(0);
    expect(await catalog.editButtons().count()).toBe(0);
    await catalog.tab("build-clusters");
    await catalog.buildsNotAvailable().waitFor();
    expect(await catalog.buildMarkToggles().count()).toBe(0);
  });

  it("the new-session wizard opens on an offering with GPUs free (L4), not on the busy A100", async () => {
    const wizard = new NewSessionPage(alicePage);
    await alicePage.goto("/sessions/new");
    await wizard.offering("l4").waitFor();
    await expect.poll(() => wizard.offering("l4").isChecked()).toBe(true);
    expect(await wizard.offering("a100").isChecked()).toBe(false);
    expect(await wizard.freeText("l4")).toBe("3 of 4 GPUs free now");
    await shots.take(alicePage, "wizard-preselected");
  });
});
