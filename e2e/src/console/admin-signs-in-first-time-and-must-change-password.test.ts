// Journey: the bootstrap administrator signs in for the first time and must change the password before
// anything else is reachable; afterwards the console opens, sign-out works, and an expired token sends
// the user back to the login page with their place kept.

import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { closeBrowser, expectAccessible, launchBrowser, newContext, PHONE, Screenshots } from "./browser.ts";
import { LoginPage } from "./pages/login-page.ts";
import { PasswordPage } from "./pages/password-page.ts";
import { Shell } from "./pages/shell.ts";
import { ADMIN_EMAIL, ADMIN_FIRST_PASSWORD, type ConsoleStack, startConsoleStack } from "./stack.ts";

const NEW_PASSWORD = "a-much-better-password-42";

describe("the administrator's first sign-in", () => {
  let stack: ConsoleStack;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const shots = new Screenshots("admin-first-sign-in");

  beforeAll(async () => {
    stack = await startConsoleStack();
    browser = await launchBrowser();
    context = await newContext(browser, stack.url);
    page = await context.newPage();
  });
  afterEach(async (ctx) => shots.onFailure(page, ctx));
  afterAll(async () => {
    await closeBrowser(browser);
    await stack?.stop();
  });

  it("a deep link while signed out leads to the login page, which passes the accessibility check", async () => {
    await page.goto("/sessions/ses_does_not_matter");
    await new LoginPage(page).waitFor();
    expect(new URL(page.url()).searchParams.get("next")).toBe("/sessions/ses_does_not_matter");
    await shots.take(page, "login");
    await expectAccessible(page);
  });

  it("a wrong password shows the API's message and the request id", async () => {
    const login = new LoginPage(page);
    await login.signIn(ADMIN_EMAIL, "not-the-password");
    await expect.poll(() => login.errorMessage().textContent()).toMatch(/.+/);
    expect(await login.errorRequestId().textContent()).toMatch(/^req_/);
    await shots.take(page, "wrong-password");
  });

  it("the first sign-in lands on the forced password change, and no other page is reachable", async () => {
    await new LoginPage(page).signIn(ADMIN_EMAIL, ADMIN_FIRST_PASSWORD);
    await new PasswordPage(page).waitFor();
    await new PasswordPage(page).forcedNotice().waitFor();
    await shots.take(page, "forced-password-change");
    await expectAccessible(page);
    for (const path of ["/sessions", "/admin/users", "/queue"]) {
      await page.goto(path);
      await new PasswordPage(page).waitFor();
      expect(new URL(page.url()).pathname).toBe("/password");
    }
  });

  it("a too-short password is refused before it reaches the API", async () => {
    // Every request the page sends from here on is recorded: the password endpoint must see none.
    const sent: string[] = [];
    const record = (r: { url(): string }) => sent.push(r.url());
    page.on("request", record);
    try {
      await new PasswordPage(page).change(ADMIN_FIRST_PASSWORD, "short");
      await new PasswordPage(page).problems().waitFor();
    } finally {
      page.off("request", record);
    }
    expect(sent.filter((u) => new URL(u).pathname === "/api/v1/auth/password")).toEqual([]);
  });

  it("after the change the console opens where the admin was going", async () => {
    await new PasswordPage(page).change(ADMIN_FIRST_PASSWORD, NEW_PASSWORD);
    await page.waitForURL((u) => u.pathname === "/queue");
    await new Shell(page).signedIn();
    expect(await new Shell(page).accountEmail().textContent()).toBe(ADMIN_EMAIL);
    await shots.take(page, "signed-in");
  });

  it("an expired token returns to the login page keeping the admin's place", async () => {
    await page.goto("/sessions?state=Running");
    await new Shell(page).signedIn();
    // Make the stored token expire now, as the short-lived token would on its own.
    await page.evaluate(() => {
      const raw = sessionStorage.getItem("berth.auth");
      if (!raw) throw new Error("not signed in");
      sessionStorage.setItem("berth.auth", JSON.stringify({ ...JSON.parse(raw), expiresAt: Date.now() + 1500 }));
    });
    await page.reload();
    await new LoginPage(page).expiredNotice().waitFor({ timeout: 10_000 });
    expect(new URL(page.url()).searchParams.get("next")).toBe("/sessions?state=Running");
    await shots.take(page, "expired");
    await new LoginPage(page).signIn(ADMIN_EMAIL, NEW_PASSWORD);
    await page.waitForURL((u) => u.pathname === "/sessions" && u.searchParams.get("state") === "Running");
  });

  it("the keyboard reaches everything: a skip link first, a visible focus ring, the navigation in order", async () => {
    await page.goto("/sessions");
    await new Shell(page).signedIn();
    await page.keyboard.press("Tab");
    const focused = () =>
      page.evaluate(() => {
        let el: Element | null = document.activeElement;
        while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
        const style = el ? getComputedStyle(el) : undefined;
        return {
          text: (el?.getAttribute("aria-label") ?? el?.textContent ?? "").trim(),
          outline: style?.outlineStyle ?? "none",
        };
      });
    expect(await focused()).toMatchObject({ text: "Skip to content" });
    expect((await focused()).outline).not.toBe("none");
    const seen: string[] = [];
    // The brand, the member pages, the Admin menu's button, the header's balance (a link to its wallet), the
    // bell, then the account button, whose panel (opened with Enter) holds Sign out.
    await new Shell(page).headerBalance().waitFor();
    // An admin's header (member pages, Admin menu, balance, indicator, bell, account) is one line at 1280×800.
    const centers = await page.evaluate(() => {
      const header = document.querySelector("berth-app")?.shadowRoot?.querySelector("header");
      return [...(header?.children ?? [])]
        .map((e) => e.getBoundingClientRect())
        .filter((r) => r.width > 0 && r.height > 0 && r.left >= 0)
        .map((r) => r.top + r.height / 2);
    });
    expect(Math.max(...centers) - Math.min(...centers), `header rows at ${centers.join(", ")}`).toBeLessThan(8);
    await shots.take(page, "header-1280");
    for (let i = 0; i < 14 && !seen.at(-1)?.startsWith("Account:"); i++) {
      await page.keyboard.press("Tab");
      seen.push((await focused()).text);
    }
    expect(seen).toEqual(
      expect.arrayContaining([
        "Sessions",
        "Queue",
        "Credits",
        "Admin▾",
        "Notifications, 0 unread notifications",
        `Account: ${ADMIN_EMAIL}`,
      ]),
    );
    expect(seen.some((t) => /credits$/.test(t))).toBe(true);
    await page.keyboard.press("Enter");
    await page.keyboard.press("Tab");
    expect((await focused()).text).toBe("Sign out");
    expect((await focused()).outline).not.toBe("none");
    await page.keyboard.press("Escape");
    expect((await focused()).text).toBe(`Account: ${ADMIN_EMAIL}`);
    // The Admin menu opens with Enter onto the administration pages, in order (a super_admin also sees the
    // platform's own), and Escape closes it.
    await new Shell(page).adminMenu().focus();
    await page.keyboard.press("Enter");
    const adminPages: string[] = [];
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press("Tab");
      adminPages.push((await focused()).text);
    }
    expect(adminPages).toEqual([
      "Users",
      "Organizations",
      "Projects",
      "Clusters",
      "Webhooks",
      "Audit log",
      "Catalog",
      "Idle & time limits",
      "Fair share",
      "Storage pools",
      "System settings",
      "Sign-up requests",
    ]);
    await shots.take(page, "admin-menu-1280");
    await page.keyboard.press("Escape");
    expect((await focused()).text).toBe("Admin▾");
    expect(await new Shell(page).adminPanel().isHidden()).toBe(true);
    expect(await new Shell(page).accountPanel().isHidden()).toBe(true);
  });

  it("sign-out returns to the login page, and the shell works at a phone's width", async () => {
    await page.setViewportSize(PHONE);
    await new Shell(page).accountMenu().click();
    await shots.take(page, "account-menu-phone");
    await expectAccessible(page);
    await new Shell(page).signOut();
    await new LoginPage(page).waitFor();
    await shots.take(page, "signed-out-phone");
    await page.goto("/sessions");
    await new LoginPage(page).waitFor();
  });
});
