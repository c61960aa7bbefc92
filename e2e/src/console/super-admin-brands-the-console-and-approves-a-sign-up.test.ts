// Journey: a super_admin brands the product (name, logo, accent colour, support link), opens sign-up to one
// domain with approval, and sets the placement policy; the console and its sign-in page carry the brand at
// once; a visitor from another domain is refused, one from the allowed domain waits; the super_admin
// approves them from the queue and they sign in. Real API, Postgres and Chromium; axe-core on every page.
import { readSystemSettings } from "@berth/api/testing";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { closeBrowser, closeContexts, expectAccessible, launchBrowser, newContext, Screenshots } from "./browser.ts";
import { LoginPage } from "./pages/login-page.ts";
import { PasswordPage } from "./pages/password-page.ts";
import { SettingsPage } from "./pages/settings-page.ts";
import { Shell } from "./pages/shell.ts";
import { SignupPage } from "./pages/signup-page.ts";
import { ADMIN_EMAIL, ADMIN_FIRST_PASSWORD, type ConsoleStack, startConsoleStack } from "./stack.ts";

const NEW_PASSWORD = "a-brand-new-admin-password";
const VISITOR = { email: "grace@example.org", password: "graces-own-password-1" };
// A 32x32 PNG: a purple square with three white bars.
const LOGO = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAIAAAD8GO2jAAAAOUlEQVR42mP48OwLTRHDqAUkWVCl10cVNGrBSLbgP5XAwFkwGsmjqWg0FY2motFUNGrBaNNxwCwAAEFzm2nIuNCaAAAAAElFTkSuQmCC",
  "base64",
);

describe("a super_admin brands the console and approves a sign-up", () => {
  let stack: ConsoleStack;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  let admin: Page;
  let current: Page | undefined;
  const shots = new Screenshots("super-admin-brands-the-console-and-approves-a-sign-up");

  async function aPage(): Promise<Page> {
    const c = await newContext(browser, stack.url);
    contexts.push(c);
    current = await c.newPage();
    return current;
  }

  beforeAll(async () => {
    stack = await startConsoleStack();
    browser = await launchBrowser();
    admin = await aPage();
    const login = new LoginPage(admin);
    await login.open();
    await login.signIn(ADMIN_EMAIL, ADMIN_FIRST_PASSWORD);
    await new PasswordPage(admin).waitFor();
    await new PasswordPage(admin).change(ADMIN_FIRST_PASSWORD, NEW_PASSWORD);
    await admin.waitForURL((u) => u.pathname !== "/password");
  });
  afterEach(async (ctx) => shots.onFailure(current, ctx));
  afterAll(async () => {
    await closeContexts(contexts);
    await closeBrowser(browser);
    await stack?.stop();
  });

  it("shows Berth by default and refuses sign-up while it is closed", async () => {
    const visitor = await aPage();
    await new LoginPage(visitor).open();
    expect(await new LoginPage(visitor).heading().textContent()).toBe("Sign in to Berth");
    expect(await new LoginPage(visitor).signupLink().count()).toBe(0);
    await visitor.goto("/signup");
    await new SignupPage(visitor).closed().waitFor();
    current = admin;
  });

  it("saves the branding and the console takes it at once", async () => {
    const settings = new SettingsPage(admin);
    await settings.openFromMenu();
    await expectAccessible(admin, "settings");
    await shots.take(admin, "settings-defaults");

    // Bad input first: the API's envelope says what to fix, nothing is saved.
    await settings.saveBranding({ supportUrl: "ftp://help.example.org" });
    await settings.shell.sees("must be an http(s) URL");
    expect((await readSystemSettings(stack.db.db)).branding.support_url).toBeNull();

    await settings.saveBranding({
      productName: "Acme GPU Cloud",
      accent: "#7a2e8e",
      supportUrl: "https://help.example.org",
      logo: { name: "logo.png", mimeType: "image/png", buffer: LOGO },
    });
    await settings.saved("branding").waitFor();
    expect(await settings.shell.brandName().textContent()).toBe("Acme GPU Cloud");
    await settings.shell.brandLogo().waitFor();
    expect(await admin.title()).toBe("Acme GPU Cloud");
    const accent = await admin.evaluate(() =>
      getComputedStyle(document.documentElement).getPropertyValue("--berth-brand-accent").trim(),
    );
    expect(accent).toBe("#7a2e8e");
    await settings.currentLogo().waitFor();
    await expectAccessible(admin, "branded settings");
    await shots.take(admin, "branded");
  });

  it("opens sign-up to one domain with approval, and sets the placement policy", async () => {
    const settings = new SettingsPage(admin);
    await settings.openSignupWithApproval("Example.org\n");
    await settings.saved("signup").waitFor();
    await settings.placeBySpreading();
    await settings.saved("placement").waitFor();
    const s = await readSystemSettings(stack.db.db);
    expect(s.signup).toMatchObject({ policy: "approval", allowed_domains: ["example.org"] });
    expect(s.placement.policy).toBe("spread");
  });

  it("brands the sign-in page; a visitor of another domain is refused, one of the allowed domain waits", async () => {
    const visitor = await aPage();
    await new LoginPage(visitor).open();
    await expect.poll(async () => new LoginPage(visitor).heading().textContent()).toBe("Sign in to Acme GPU Cloud");
    await new LoginPage(visitor).logo().waitFor();
    await expectAccessible(visitor, "branded sign-in");
    await shots.take(visitor, "branded-sign-in");

    await new LoginPage(visitor).signupLink().click();
    const signup = new SignupPage(visitor);
    await signup.form().waitFor();
    await signup.signUp(VISITOR.email, VISITOR.password, "something else entirely");
    await signup.problem().waitFor();
    await signup.signUp("mallory@elsewhere.test", "mallorys-password-1");
    await signup.shell.errorMessage().waitFor();
    expect(await signup.shell.errorMessage().textContent()).toContain("example.org");
    await expectAccessible(visitor, "sign-up refused");
    await shots.take(visitor, "sign-up-refused");
    await signup.signUp(VISITOR.email, VISITOR.password);
    await signup.done().waitFor();
    expect(await signup.done().getAttribute("data-status")).toBe("pending_approval");
    await expectAccessible(visitor, "sign-up waiting");
    await shots.take(visitor, "sign-up-waiting");

    // Not before approval: it answers like a wrong password.
    await new LoginPage(visitor).open();
    await new LoginPage(visitor).signIn(VISITOR.email, VISITOR.password);
    await new Shell(visitor).errorMessage().waitFor();
  });

  it("approves the visitor from the queue, who then signs in", async () => {
    current = admin;
    const settings = new SettingsPage(admin);
    await settings.openSignupQueue();
    await settings.signupRequest(VISITOR.email).waitFor();
    expect(await settings.signupRequests().count()).toBe(1);
    await expectAccessible(admin, "queue");
    await shots.take(admin, "queue");
    await settings.approve(VISITOR.email);
    await settings.shell.sees("Nobody is waiting");

    const visitor = await aPage();
    const login = new LoginPage(visitor);
    await login.open();
    await login.signIn(VISITOR.email, VISITOR.password);
    await new Shell(visitor).signedIn();
    expect(await new Shell(visitor).brandName().textContent()).toBe("Acme GPU Cloud");
    // A member is offered no system settings, and the settings route sends them home.
    expect(await new Shell(visitor).adminMenu().count()).toBe(0);
    expect(await new Shell(visitor).linksContaining("System settings").count()).toBe(0);
    await visitor.goto("/admin/settings");
    await visitor.waitForURL((u) => u.pathname === "/dashboard");
    await shots.take(visitor, "member-signed-in");
  });
});
