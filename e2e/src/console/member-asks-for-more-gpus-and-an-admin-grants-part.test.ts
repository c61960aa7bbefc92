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
import type { Fleet } from "../index.ts";
import { closeBrowser, DESKTOP, expectAccessible, launchBrowser, PHONE, Screenshots } from "./browser.ts";
import { Visitors } from "./pages/login-page.ts";
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

  const limitRow = (page: Page, name: string) => page.locator(`berth-quotas-view [data-limit="${name}"]`);

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
    await alicePage.getByRole("link", { name: "Limits", exact: true }).click();
    await limitRow(alicePage, "max_gpus_per_user").waitFor();
    expect(await limitRow(alicePage, "max_gpus_per_user").getByTestId("limit-value").textContent()).toBe("4");
    expect(await limitRow(alicePage, "max_gpus_per_user").getByTestId("limit-policy").textContent()).toContain(
      "global",
    );
    await alicePage.getByTestId("empty-state").waitFor(); // no request yet
    await shots.take(alicePage, "member-limits");
    await expectAccessible(alicePage);
  });

  it("she asks for 8 GPUs with a reason, by keyboard; asking for no more than she has is refused first", async () => {
    await alicePage.getByTestId("ask-more-max_gpus_per_user").click();
    const value = alicePage.getByLabel("New value");
    await expect.poll(() => value.inputValue()).toBe("5");
    await value.fill("3");
    await alicePage.getByTestId("ask-send").click();
    await alicePage.getByTestId("ask-problem").waitFor();
    await value.fill("");
    await value.focus();
    await alicePage.keyboard.type("8");
    await alicePage.keyboard.press("Tab");
    await alicePage.keyboard.type("a sweep over eight seeds for the paper");
    await alicePage.keyboard.press("Tab");
    await alicePage.keyboard.press("Enter");
    await expect
      .poll(() => alicePage.getByTestId("notice").textContent())
      .toMatch(/GPUs at once, per person: 8 was sent/);
    const row = alicePage.getByTestId("quota-request-row").first();
    await row.waitFor();
    expect(await row.getAttribute("data-status")).toBe("pending");
    requestId = (await row.getAttribute("data-request-id")) as string;
    expect(requestId).toMatch(/^qrq_/);
    await shots.take(alicePage, "member-asked");
    await expectAccessible(alicePage);
  });

  it("her administrator finds it in the inbox and grants 6 of the 8 with a note", async () => {
    adminPage = await people.signIn(admin);
    await adminPage.getByRole("link", { name: "Limits", exact: true }).click();
    await adminPage.getByTestId("quota-inbox-link").click();
    const row = adminPage.locator(`[data-testid="inbox-row"][data-request-id="${requestId}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain("a sweep over eight seeds");
    expect(await row.textContent()).toContain(alice.email);
    await shots.take(adminPage, "inbox");
    await expectAccessible(adminPage);
    await row.getByTestId("inbox-decide").click();
    await adminPage.getByTestId("quota-decide-panel").waitFor();
    // More than asked is refused in the page, before the API.
    await adminPage.getByTestId("grant-max_gpus_per_user").fill("9");
    await adminPage.getByTestId("quota-approve").click();
    await adminPage.getByTestId("grant-problem").waitFor();
    await adminPage.getByTestId("grant-max_gpus_per_user").fill("6");
    await adminPage.getByTestId("quota-decide-note").fill("six now, more after the deadline");
    await shots.take(adminPage, "decide");
    await expectAccessible(adminPage);
    await adminPage.getByTestId("quota-approve").click();
    await expect.poll(() => adminPage.getByTestId("notice").textContent()).toMatch(/Partly approved .* policy user-/);
    await adminPage.getByTestId("inbox-filter-status").selectOption("any");
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
    await alicePage.reload();
    await alicePage.getByTestId("account-pending").waitFor();
    const failed = alicePage.getByTestId("account-error");
    await failed.getByRole("button", { name: "Try again" }).waitFor();
    await failed.getByText("The database is not answering.").waitFor();
    await shots.take(alicePage, "account-did-not-load");
    await expectAccessible(alicePage, "account-error");
    await failed.getByRole("button", { name: "Try again" }).click();
    await alicePage.getByTestId("account-pending").waitFor(); // the retry is under way (its answer comes late too)
    await limitRow(alicePage, "max_gpus_per_user").waitFor();
    expect(await alicePage.getByTestId("account-error").count()).toBe(0);
    await alicePage.unroute("**/api/v1/auth/me");
    await expect
      .poll(() => limitRow(alicePage, "max_gpus_per_user").getByTestId("limit-value").textContent())
      .toBe("6");
    expect(await limitRow(alicePage, "max_gpus_per_user").getByTestId("limit-policy").textContent()).toMatch(
      /user-usr-/,
    );
    const row = alicePage.locator(`[data-request-id="${requestId}"]`);
    expect(await row.getByTestId("quota-request-status").textContent()).toBe("Partly approved");
    expect(await row.textContent()).toContain("granted 6");
    expect(await row.textContent()).toContain("six now, more after the deadline");
    const bell = await t.request("GET", "/api/v1/notifications?kind=quota.request_decided", { token: alice.token });
    expect(bell.body.data[0].title).toBe("Quota request partly approved");
    await shots.take(alicePage, "member-granted");
    await expectAccessible(alicePage);
  });

  it("the platform's administrator reads the offerings by tier and adds one", async () => {
    const root = await people.signIn(superAdmin);
    await root.getByTestId("admin-menu").click();
    await root.getByRole("link", { name: "Catalog", exact: true }).click();
    await root.getByTestId("tier-premium").waitFor();
    // The test's three offerings and the default catalog's fractional ones, each slice named by its share.
    const offerings = await t.request("GET", "/api/v1/offerings?size=100", { token: superAdmin.token });
    expect(await root.locator('[data-testid="offering-row"]').count()).toBe(offerings.body.data.length);
    const slice = offerings.body.data.find((o: { fraction?: string }) => o.fraction === "1/8");
    if (slice) {
      const cell = root.locator(
        `[data-testid="offering-row"][data-name="${slice.name}"] [data-testid="offering-share"]`,
      );
      expect(await cell.textContent()).toContain("1/8 card");
    }
    await shots.take(root, "catalog-offerings");
    await expectAccessible(root);
    await root.getByTestId("catalog-new").click();
    await root.getByTestId("f-name").fill("b200");
    await root.getByTestId("f-display_name").fill("NVIDIA B200");
    await root.getByTestId("f-gpu_model").fill("NVIDIA-B200");
    await root.getByTestId("f-tier").fill("frontier");
    await root.getByTestId("catalog-save").click();
    // The rate is required: the page says so before the API.
    await root.getByTestId("field-problem").waitFor();
    await root.getByTestId("f-hourly_credit_rate").fill("9.5");
    await shots.take(root, "catalog-new-offering");
    await expectAccessible(root);
    await root.getByTestId("catalog-save").click();
    await expect.poll(() => root.getByTestId("notice").textContent()).toContain("Created the offering b200");
    await root.getByTestId("tier-frontier").waitFor();
    await root.getByTestId("offering-toggle-b200").click();
    await expect.poll(() => root.getByTestId("notice").textContent()).toContain("Disabled the offering b200");
    const b200 = await t.request("GET", "/api/v1/offerings/b200", { token: superAdmin.token });
    expect(b200.body).toMatchObject({ tier: "frontier", hourly_credit_rate: "9500000", enabled: false });
    // A duplicate name is the API's refusal, shown with its code.
    await root.getByTestId("catalog-new").click();
    for (const [f, v] of [
      ["f-name", "b200"],
      ["f-display_name", "again"],
      ["f-gpu_model", "X"],
      ["f-tier", "t"],
      ["f-hourly_credit_rate", "1"],
    ] as const)
      await root.getByTestId(f).fill(v);
    await root.getByTestId("catalog-save").click();
    await expect.poll(() => root.getByTestId("error-panel").getAttribute("data-code")).toBe("already_exists");
    people.current = root;
  });

  it("presets, images, policies (with the approval's) and build clusters each have their page", async () => {
    const root = people.current as Page;
    for (const [tab, expectRow] of [
      ["presets", "gpu-small"],
      ["images", "jupyterlab"],
      ["policies", "global"],
      ["build-clusters", "gpu-east"],
    ] as const) {
      await root.getByTestId(`catalog-tab-${tab}`).click();
      await root.locator(`[data-testid="catalog-row"][data-name="${expectRow}"]`).waitFor();
      await shots.take(root, `catalog-${tab}`);
      await expectAccessible(root, tab);
    }
    // The super_admin marks a cluster for image builds, and the mark is the API's.
    await root.getByTestId("catalog-tab-build-clusters").click();
    const east = root.locator('[data-testid="catalog-row"][data-name="gpu-east"]');
    await expect.poll(() => east.getByTestId("build-mark").textContent()).toBe("Not marked");
    await east.getByTestId("build-mark-toggle").click();
    await expect.poll(() => east.getByTestId("build-mark").textContent()).toBe("Marked");
    const marks = await t.request("GET", "/api/v1/image-builds/clusters", { token: superAdmin.token });
    expect(marks.body.data).toHaveLength(1);
    await east.getByTestId("build-mark-toggle").click();
    await expect.poll(() => east.getByTestId("build-mark").textContent()).toBe("Not marked");
    // The policy the approval wrote is there, and the global one changes in place.
    await root.getByTestId("catalog-tab-policies").click();
    await root.locator('[data-testid="catalog-row"][data-name^="user-usr-"]').waitFor();
    await root.getByTestId("catalog-edit-global").click();
    await root.getByTestId("f-max_session_hours").fill("72");
    await root.getByTestId("catalog-save").click();
    await expect.poll(() => root.getByTestId("notice").textContent()).toContain("Saved the resource policy global");
    const global = await t.request("GET", "/api/v1/resource-policies/global", { token: superAdmin.token });
    expect(global.body.limits).toMatchObject({ max_gpus_per_user: 4, max_session_hours: 72 });
  });

  it("an organization's administrator reads the catalog but is offered no change", async () => {
    await adminPage.getByTestId("admin-menu").click();
    await adminPage.getByRole("link", { name: "Catalog", exact: true }).click();
    await adminPage.getByTestId("tier-premium").waitFor();
    expect(await adminPage.getByTestId("catalog-new").count()).toBe(0);
    expect(await adminPage.locator('[data-testid^="catalog-edit-"]').count()).toBe(0);
    await adminPage.getByTestId("catalog-tab-build-clusters").click();
    await adminPage.getByTestId("builds-not-available").waitFor();
    expect(await adminPage.getByTestId("build-mark-toggle").count()).toBe(0);
  });

  it("the new-session wizard opens on an offering with GPUs free (L4), not on the busy A100", async () => {
    await alicePage.goto("/sessions/new");
    await alicePage.getByTestId("offering-l4").waitFor();
    await expect.poll(() => alicePage.getByTestId("offering-l4").isChecked()).toBe(true);
    expect(await alicePage.getByTestId("offering-a100").isChecked()).toBe(false);
    expect(await alicePage.getByTestId("offering-free-l4").textContent()).toBe("3 of 4 GPUs free now");
    await shots.take(alicePage, "wizard-preselected");
  });
});
