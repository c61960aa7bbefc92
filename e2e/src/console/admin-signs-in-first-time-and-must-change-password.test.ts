// Journey: the bootstrap administrator signs in for the first time and must change the password before
// anything else is reachable; afterwards the console opens, sign-out works, and an expired token sends
// the user back to the login page with their place kept.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { describeViolations, launchBrowser, newContext, PHONE, Screenshots, seriousA11yViolations } from "./browser.ts";
import { LoginPage, PasswordPage } from "./pages/login-page.ts";
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
    await browser?.close();
    await stack?.stop();
  });

  it("a deep link while signed out leads to the login page, which passes the accessibility check", async () => {
    await page.goto("/sessions/ses_does_not_matter");
    await page.getByTestId("login-form").waitFor();
    expect(new URL(page.url()).searchParams.get("next")).toBe("/sessions/ses_does_not_matter");
    await shots.take(page, "login");
    const v = await seriousA11yViolations(page);
    expect(v, describeViolations(v)).toEqual([]);
  });

  it("a wrong password shows the API's message and the request id", async () => {
    const login = new LoginPage(page);
    await login.signIn(ADMIN_EMAIL, "not-the-password");
    await expect.poll(() => login.errorMessage().textContent()).toMatch(/.+/);
    expect(await page.getByTestId("error-request-id").textContent()).toMatch(/^req_/);
    await shots.take(page, "wrong-password");
  });

  it("the first sign-in lands on the forced password change, and no other page is reachable", async () => {
    await new LoginPage(page).signIn(ADMIN_EMAIL, ADMIN_FIRST_PASSWORD);
    await new PasswordPage(page).waitFor();
    await page.getByTestId("forced-password-notice").waitFor();
    await shots.take(page, "forced-password-change");
    const v = await seriousA11yViolations(page);
    expect(v, describeViolations(v)).toEqual([]);
    for (const path of ["/sessions", "/admin/users", "/queue"]) {
      await page.goto(path);
      await page.getByTestId("password-form").waitFor();
      expect(new URL(page.url()).pathname).toBe("/password");
    }
  });

  it("a too-short password is refused before it reaches the API", async () => {
    await new PasswordPage(page).change(ADMIN_FIRST_PASSWORD, "short");
    await page.getByTestId("password-problems").waitFor();
  });

  it("after the change the console opens where the user was going", async () => {
    await new PasswordPage(page).change(ADMIN_FIRST_PASSWORD, NEW_PASSWORD);
    await page.waitForURL((u) => u.pathname === "/queue");
    await page.getByTestId("account-email").waitFor();
    expect(await page.getByTestId("account-email").textContent()).toBe(ADMIN_EMAIL);
    await shots.take(page, "signed-in");
  });

  it("an expired token returns to the login page keeping the user's place", async () => {
    await page.goto("/sessions?state=Running");
    await page.getByTestId("account-email").waitFor();
    // Make the stored token expire now, as the short-lived token would on its own.
    await page.evaluate(() => {
      const raw = sessionStorage.getItem("berth.auth");
      if (!raw) throw new Error("not signed in");
      sessionStorage.setItem("berth.auth", JSON.stringify({ ...JSON.parse(raw), expiresAt: Date.now() + 1500 }));
    });
    await page.reload();
    await page.getByTestId("expired-notice").waitFor({ timeout: 10_000 });
    expect(new URL(page.url()).searchParams.get("next")).toBe("/sessions?state=Running");
    await shots.take(page, "expired");
    await new LoginPage(page).signIn(ADMIN_EMAIL, NEW_PASSWORD);
    await page.waitForURL((u) => u.pathname === "/sessions" && u.searchParams.get("state") === "Running");
  });

  it("the keyboard reaches everything: a skip link first, a visible focus ring, the navigation in order", async () => {
    await page.goto("/sessions");
    await page.getByTestId("account-email").waitFor();
    await page.keyboard.press("Tab");
    const focused = () =>
      page.evaluate(() => {
        let el: Element | null = document.activeElement;
        while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
        const style = el ? getComputedStyle(el) : undefined;
        return { text: (el?.textContent ?? "").trim(), outline: style?.outlineStyle ?? "none" };
      });
    expect(await focused()).toMatchObject({ text: "Skip to content" });
    expect((await focused()).outline).not.toBe("none");
    const seen: string[] = [];
    // The brand, seven pages, the header's balance (a link to its wallet), then Sign out.
    await page.getByTestId("header-balance").waitFor();
    for (let i = 0; i < 11; i++) {
      await page.keyboard.press("Tab");
      seen.push((await focused()).text);
    }
    expect(seen).toEqual(expect.arrayContaining(["Sessions", "Queue", "Credits", "Users", "Clusters", "Sign out"]));
    expect(seen.some((t) => /credits$/.test(t))).toBe(true);
  });

  it("sign-out returns to the login page, and the shell works at a phone's width", async () => {
    await page.setViewportSize(PHONE);
    await page.getByTestId("sign-out").click();
    await page.getByTestId("login-form").waitFor();
    await shots.take(page, "signed-out-phone");
    await page.goto("/sessions");
    await page.getByTestId("login-form").waitFor();
  });
});
