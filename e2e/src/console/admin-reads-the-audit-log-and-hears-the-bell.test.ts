// Journey: an administrator reads the audit log (filters, a CSV download) and the bell rings live when a
// notification arrives, without a reload; marking all read clears it. Real API, Postgres and Chromium.
import { readFileSync } from "node:fs";
import { notify } from "@berth/api/testing";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { closeBrowser, expectAccessible, launchBrowser, newContext, Screenshots } from "./browser.ts";
import { AuditPage } from "./pages/audit-page.ts";
import { LoginPage } from "./pages/login-page.ts";
import { PasswordPage } from "./pages/password-page.ts";
import { Shell } from "./pages/shell.ts";
import { ADMIN_EMAIL, ADMIN_FIRST_PASSWORD, type ConsoleStack, startConsoleStack } from "./stack.ts";

const NEW_PASSWORD = "an-auditors-password-2026";

describe("the audit log and the bell in the console", () => {
  let stack: ConsoleStack;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const shots = new Screenshots("admin-reads-the-audit-log-and-hears-the-bell");

  beforeAll(async () => {
    stack = await startConsoleStack();
    browser = await launchBrowser();
    context = await newContext(browser, stack.url);
    page = await context.newPage();
    // A wrong password first: a denied attempt for the log.
    await new LoginPage(page).open();
    await new LoginPage(page).signIn(ADMIN_EMAIL, "not-the-password");
    await new LoginPage(page).errorMessage().waitFor();
    await new LoginPage(page).signIn(ADMIN_EMAIL, ADMIN_FIRST_PASSWORD);
    await new PasswordPage(page).waitFor();
    await new PasswordPage(page).change(ADMIN_FIRST_PASSWORD, NEW_PASSWORD);
    await page.waitForURL((u) => u.pathname !== "/password");
  });
  afterEach(async (ctx) => shots.onFailure(page, ctx));
  afterAll(async () => {
    await closeBrowser(browser);
    await stack?.stop();
  });

  it("lists who did what, filters by action prefix and outcome, and passes the accessibility check", async () => {
    const audit = new AuditPage(page);
    await audit.open();
    const actions = () => audit.column("action");
    expect(await actions()).toEqual(expect.arrayContaining(["auth.login"]));
    await shots.take(page, "audit-log");
    await expectAccessible(page);

    await audit.filter({ outcome: "denied", action: "auth.*" });
    await expect.poll(() => audit.column("outcome")).toEqual(["denied"]);
    expect(await actions()).toEqual(["auth.login"]);
    await shots.take(page, "audit-log-denied-sign-ins");
  });

  it("downloads the filtered rows as CSV", async () => {
    const download = await new AuditPage(page).download();
    expect(download.suggestedFilename()).toMatch(/^audit-log-.*\.csv$/);
    const text = readFileSync((await download.path()) as string, "utf8");
    const lines = text.trim().split("\r\n");
    expect(lines[0]).toMatch(/^seq,at,actor_kind,/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(",auth.login,");
    expect(lines[1]).toContain(",denied,401,");
  });

  it("rings the bell live when a notification arrives, and marking all read clears it", async () => {
    await page.goto("/sessions");
    const shell = new Shell(page);
    const bell = shell.bell();
    await bell.waitFor();
    await expect.poll(async () => shell.liveIndicator().getAttribute("data-mode")).toBe("live");
    expect(await shell.notificationCount().count()).toBe(0);
    const admin = await stack.db.db("users").where({ email: ADMIN_EMAIL }).first();
    await notify(stack.db.db, {
      userId: admin.id,
      organizationId: null,
      kind: "credits.running_low",
      title: "Credits running low",
      body: "Your session ses_demo has less than 10 minutes of credits left.",
      data: { session_id: "ses_demo" },
      at: new Date(),
    });
    await expect.poll(async () => shell.notificationCount().textContent(), { timeout: 10_000 }).toBe("1");
    expect(await bell.getAttribute("aria-label")).toContain("1 unread notification");
    await bell.click();
    await shell.notificationPanel().waitFor();
    await shots.take(page, "bell-open");
    await expectAccessible(page);
    await shell.readAllNotifications();
    await expect.poll(async () => shell.notificationCount().count()).toBe(0);
    await shots.take(page, "bell-read");
  });
});
