// Journey: credits in the console over the real API and Postgres. The platform's super_admin has issued
// credits to the organization; its administrator signs in and sees the organization's balance in the
// header, allocates credits to a member who has no wallet yet, and is shown the API's refusal when the
// wallet cannot cover an amount. The member sees her balance, asks for more with a reason (by keyboard),
// the administrator approves part of it, and the member's balance and ledger show it: filtered by kind
// and by day, and exported as CSV. axe-core checks every credits page.
import { readFileSync } from "node:fs";
import { type IdentityTestApi, startIdentityTestApi, type TestUser } from "@berth/api/testing";
import { ensureConsoleBuilt } from "@berth/console";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { apiAs } from "../api-client.ts";
import { closeBrowser, DESKTOP, expectAccessible, launchBrowser, PHONE, Screenshots } from "./browser.ts";
import { CreditsPages } from "./pages/credits-pages.ts";
import { Visitors } from "./pages/visitors.ts";

describe("an administrator allocates credits and approves a member's request in the console", () => {
  let t: IdentityTestApi;
  let browser: Browser;
  const people = new Visitors(
    () => browser,
    () => t.api.url,
  );
  const shots = new Screenshots("credits");
  let admin: TestUser;
  let alice: TestUser;
  let orgWalletId: string;
  let adminPage: Page;
  let alicePage: Page;
  let requestId: string;

  beforeAll(async () => {
    ensureConsoleBuilt();
    t = await startIdentityTestApi();
    const superAdmin = await t.aUser({ superAdmin: true });
    const org = await t.anOrganization("Acme");
    admin = await t.aUser({ email: `admin-${Date.now()}@acme.test` });
    alice = await t.aUser({ email: `alice-${Date.now()}@acme.test` });
    await t.member(admin, org.id, null, "org_admin");
    await t.member(alice, org.id, null, "member");
    // The super_admin issues 1,000 credits to the organization, through the public API.
    const root = apiAs(t.api.url, superAdmin.token);
    orgWalletId = (await root.call("openWallet", { body: { organization_id: org.id, owner_kind: "organization" } })).id;
    await root.call(
      "allocateCredits",
      {
        body: {
          from_wallet_id: "wal_system",
          to_wallet_id: orgWalletId,
          amount: "1000000000",
          reason: "opening grant",
        },
      },
      { idempotencyKey: "seed-grant" },
    );
    browser = await launchBrowser();
  });
  afterEach(async (ctx) => shots.onFailure(people.current, ctx));
  afterAll(async () => {
    await people.closeAll();
    await closeBrowser(browser);
    await t?.stop();
  });

  it("the administrator signs in and sees the organization's balance in the header", async () => {
    adminPage = await people.signIn(admin);
    const credits = new CreditsPages(adminPage);
    await expect.poll(() => credits.headerAmount()).toBe("1,000.00");
    expect(await credits.headerBalance().getAttribute("data-wallet-id")).toBe(orgWalletId);
    await credits.openWalletsFromNav();
    await credits.walletRow(orgWalletId).waitFor();
    expect(await credits.walletRowBalance(orgWalletId).textContent()).toBe("1,000.00");
    await shots.take(adminPage, "admin-wallets");
    await expectAccessible(adminPage);
  });

  it("the administrator allocates 25.5 credits to a member who had no wallet", async () => {
    const credits = new CreditsPages(adminPage);
    await credits.openAllocations();
    await credits.allocate(`open:user:${alice.id}`, "25.5", "onboarding");
    await expect.poll(() => credits.notice().textContent()).toMatch(/Moved 25\.50 credits .* to .*alice/);
    const row = credits.movementRow("onboarding");
    await row.waitFor();
    expect(await credits.movementAmount(row).textContent()).toBe("25.50");
    await expect.poll(() => credits.headerAmount()).toBe("974.50");
    await shots.take(adminPage, "allocated");
    await expectAccessible(adminPage);
    await adminPage.setViewportSize(PHONE);
    await shots.take(adminPage, "allocated-phone");
    await expectAccessible(adminPage);
    await adminPage.setViewportSize(DESKTOP);
  });

  it("an allocation the wallet cannot cover shows the API's message and request id", async () => {
    const credits = new CreditsPages(adminPage);
    await credits.openAllocations();
    // Her wallet exists now: the option names her wallet.
    await credits.allocate(await credits.targetNamed(alice.email), "5000", "too much");
    const panel = credits.shell.errorPanel();
    await panel.waitFor();
    expect(await panel.getAttribute("data-code")).toBe("insufficient_credits");
    expect(await credits.shell.errorRequestId().textContent()).toMatch(/\S/);
    await shots.take(adminPage, "allocation-refused");
  });

  it("the member sees her balance and asks for more credits with a reason, by keyboard", async () => {
    alicePage = await people.signIn(alice);
    const credits = new CreditsPages(alicePage);
    await expect.poll(() => credits.headerAmount()).toBe("25.50");
    await credits.openRequests();
    await credits.shell.emptyState().waitFor();
    await expectAccessible(alicePage);
    // An amount that is not one is refused before it reaches the API: no request to it is sent.
    const asked: string[] = [];
    const record = (r: { url(): string; method(): string }) => {
      if (r.method() === "POST" && new URL(r.url()).pathname === "/api/v1/credits/requests") asked.push(r.url());
    };
    alicePage.on("request", record);
    await credits.askAmount().fill("a lot");
    await credits.submitAsk();
    await credits.askAmountProblem().waitFor();
    alicePage.off("request", record);
    expect(asked).toEqual([]);
    // Keyboard only: the amount, Tab to the reason, Tab to the button, Enter.
    await credits.askAmount().fill("");
    await credits.askAmount().focus();
    await alicePage.keyboard.type("100");
    await alicePage.keyboard.press("Tab");
    await alicePage.keyboard.type("fine-tuning run for the paper");
    await alicePage.keyboard.press("Tab");
    await alicePage.keyboard.press("Enter");
    await expect.poll(() => credits.notice().textContent()).toMatch(/request for 100\.00 credits/);
    const row = credits.requestRows().first();
    await row.waitFor();
    expect(await row.getAttribute("data-status")).toBe("pending");
    requestId = (await row.getAttribute("data-request-id")) as string;
    expect(requestId).toMatch(/^crq_/);
    await shots.take(alicePage, "member-asked");
    await expectAccessible(alicePage);
  });

  it("the administrator sees the pending request and approves 40 of the 100 credits", async () => {
    const credits = new CreditsPages(adminPage);
    await credits.openRequests();
    await credits.requestRow(requestId).waitFor();
    expect(await credits.requestRow(requestId).textContent()).toContain("fine-tuning run for the paper");
    await credits.openDecision(requestId);
    await shots.take(adminPage, "decide");
    await expectAccessible(adminPage);
    await credits.closeDecision();
    await credits.decide(requestId, { approve: "40", note: "40 now, more next month" });
    await expect.poll(() => credits.notice().textContent()).toMatch(/Partly approved: 40\.00 of the 100\.00 credits/);
    // The pending list is empty now: nothing waits.
    await credits.shell.emptyState().waitFor();
    await expect.poll(() => credits.headerAmount()).toBe("934.50");
    await credits.openRequests("?status=any");
    expect(await credits.requestRow(requestId).getAttribute("data-status")).toBe("partially_approved");
    await shots.take(adminPage, "approved-partly");
  });

  it("the member's balance and ledger show it, filtered by kind and day, and export as CSV", async () => {
    const credits = new CreditsPages(alicePage);
    // Opening a credits page refreshes the header's balance.
    await credits.openWalletsFromNav();
    await expect.poll(() => credits.headerAmount()).toBe("65.50");
    const walletId = (await credits.headerBalance().getAttribute("data-wallet-id")) as string;
    await credits.openWalletFromList(walletId);
    expect(await credits.walletBalance().getAttribute("data-units")).toBe("65500000");
    await expect.poll(() => credits.ledgerRows().count()).toBe(2);
    const [approved, allocated] = [credits.ledgerRows().nth(0), credits.ledgerRows().nth(1)];
    expect(await approved.getAttribute("data-kind")).toBe("request");
    expect(await credits.ledgerAmount(approved).textContent()).toBe("+40.00");
    expect(await credits.ledgerBalanceAfter(approved).textContent()).toBe("65.50");
    expect(await allocated.getAttribute("data-kind")).toBe("allocation");
    expect(await credits.ledgerAmount(allocated).textContent()).toBe("+25.50");
    expect(await allocated.textContent()).toContain("onboarding");
    await shots.take(alicePage, "member-ledger");
    await expectAccessible(alicePage);

    await credits.filterLedgerByKind("request");
    await expect.poll(() => credits.ledgerRows().count()).toBe(1);
    expect(new URL(alicePage.url()).searchParams.get("kind")).toBe("request");

    const tomorrow = new Date(Date.now() + 24 * 3600 * 1000);
    const day = `${tomorrow.getFullYear()}-${String(tomorrow.getMonth() + 1).padStart(2, "0")}-${String(tomorrow.getDate()).padStart(2, "0")}`;
    await credits.filterLedgerFrom(day);
    await credits.shell.emptyState().waitFor();
    await credits.clearLedgerFilters();
    await expect.poll(() => credits.ledgerRows().count()).toBe(2);

    const download = await credits.exportLedger();
    expect(download.suggestedFilename()).toBe(`ledger-${walletId}.csv`);
    const csv = readFileSync((await download.path()) as string, "utf8")
      .trim()
      .split(/\r?\n/);
    expect(csv).toHaveLength(3);
    expect(csv[1]).toContain(",request,40000000,65500000,");
    expect(csv[2]).toContain(",allocation,25500000,25500000,");

    await alicePage.setViewportSize(PHONE);
    await shots.take(alicePage, "member-ledger-phone");
    await expectAccessible(alicePage);
    await credits.openRequests();
    expect(await credits.requestStatus(requestId).textContent()).toBe("Partly approved");
    expect(await credits.requestRow(requestId).textContent()).toContain("40 now, more next month");
    await shots.take(alicePage, "member-requests-phone");
  });
});
