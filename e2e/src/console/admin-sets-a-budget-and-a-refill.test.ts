// Journey: an organization's administrator caps what its sessions may be charged per month and has a
// member's wallet topped up every week from the organization's, in the console over the real API and
// Postgres: bad amounts are caught before the API, the budget shows what is left, the refill can be paused
// and resumed, and a member sees no such page. axe-core checks the page in each state.
import { type IdentityTestApi, startIdentityTestApi, type TestUser } from "@berth/api/testing";
import { ensureConsoleBuilt } from "@berth/console";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { apiAs, refusalOf } from "../api-client.ts";
import { closeBrowser, expectAccessible, launchBrowser, Screenshots } from "./browser.ts";
import { BudgetsPage } from "./pages/budgets-page.ts";
import { Visitors } from "./pages/visitors.ts";

describe("an administrator sets a budget and a refill in the console", () => {
  let t: IdentityTestApi;
  let browser: Browser;
  const people = new Visitors(
    () => browser,
    () => t.api.url,
  );
  const shots = new Screenshots("admin-sets-a-budget-and-a-refill");
  let admin: TestUser;
  let alice: TestUser;
  let orgId: string;
  let aliceWallet: string;
  let page: Page;
  let budgets: BudgetsPage;

  beforeAll(async () => {
    ensureConsoleBuilt();
    t = await startIdentityTestApi();
    const superAdmin = await t.aUser({ superAdmin: true });
    const org = await t.anOrganization("Acme");
    orgId = org.id;
    admin = await t.aUser({ email: `admin-${Date.now()}@acme.test` });
    alice = await t.aUser({ email: `alice-${Date.now()}@acme.test` });
    await t.member(admin, org.id, null, "org_admin");
    await t.member(alice, org.id, null, "member");
    const root = apiAs(t.api.url, superAdmin.token);
    const opened = await root.call("openWallet", { body: { organization_id: org.id, owner_kind: "organization" } });
    await root.call(
      "allocateCredits",
      { body: { from_wallet_id: "wal_system", to_wallet_id: opened.id, amount: "1000000000", reason: "grant" } },
      { idempotencyKey: "seed-grant" },
    );
    const w = await apiAs(t.api.url, admin.token).call("openWallet", {
      body: { organization_id: org.id, owner_kind: "user", owner_id: alice.id },
    });
    aliceWallet = w.id;
    browser = await launchBrowser();
  });
  afterEach(async (ctx) => shots.onFailure(people.current, ctx));
  afterAll(async () => {
    await people.closeAll();
    await closeBrowser(browser);
    await t?.stop();
  });

  it("opens Budgets and refills from the credits pages, empty at first", async () => {
    page = await people.signIn(admin);
    budgets = new BudgetsPage(page);
    await budgets.openFromCredits();
    await budgets.noBudgets().waitFor();
    await budgets.noRefills().waitFor();
    await expectAccessible(page, "empty");
    await shots.take(page, "empty");
  });

  it("sets a monthly budget, refusing a bad amount before asking the API", async () => {
    await budgets.setBudget("12,5");
    await budgets.budgetProblem().waitFor();
    await budgets.setBudget("500", "monthly");
    await budgets.notice().waitFor();
    await budgets.budgetRow(orgId).waitFor();
    expect(await budgets.budgetLeft(orgId).textContent()).toBe("500.00");
    const stored = await apiAs(t.api.url, admin.token).call("getBudget", { params: { organizationId: orgId } });
    expect(stored).toMatchObject({ period: "monthly", amount: "500000000" });
  });

  it("adds a weekly top-up of a member's wallet, then pauses and resumes it", async () => {
    await budgets.addRefill({ wallet: aliceWallet, rule: "top_up_to", amount: "40", every: "weekly" });
    await budgets.notice().waitFor();
    const row = budgets.refillRow();
    await row.waitFor();
    expect(await row.textContent()).toContain("Top up to 40.00 credits");
    expect(await budgets.refillState().textContent()).toBe("active");
    await expectAccessible(page, "with a budget and a refill");
    await shots.take(page, "budget-and-refill");
    await budgets.toggleRefill();
    await expect.poll(async () => budgets.refillState().textContent()).toBe("paused");
    const refills = await apiAs(t.api.url, admin.token).call("listRefills");
    expect(refills.data).toEqual([
      expect.objectContaining({ wallet_id: aliceWallet, mode: "top_up_to", amount: "40000000", enabled: false }),
    ]);
    await budgets.toggleRefill();
    await expect.poll(async () => budgets.refillState().textContent()).toBe("active");
  });

  it("removes the budget after confirming", async () => {
    await budgets.removeBudget();
    await budgets.noBudgets().waitFor();
    const gone = await refusalOf(
      apiAs(t.api.url, admin.token).call("getBudget", { params: { organizationId: orgId } }),
    );
    expect(gone.status).toBe(404);
  });

  it("shows a member no budgets tab, and no forms on the page", async () => {
    const member = new BudgetsPage(await people.signIn(alice));
    await member.page.goto("/credits");
    await member.tab("wallets").waitFor();
    expect(await member.tab("budgets").count()).toBe(0);
    await member.open();
    await member.noBudgets().waitFor();
    expect(await member.budgetForm().count()).toBe(0);
    expect(await member.refillForm().count()).toBe(0);
  });
});
