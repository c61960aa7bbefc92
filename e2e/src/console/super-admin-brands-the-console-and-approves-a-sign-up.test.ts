// Journey: a super_admin brands the product (name, logo, accent colour, support link), opens sign-up to one
// domain with approval, and sets the placement policy; the console and its sign-in page carry the brand at
// once; a visitor from another domain is refused, one from the allowed domain waits; the super_admin
// approves them from the queue and they sign in. Real API, Postgres and Chromium; axe-core on every page.
import { readSystemSettings } from "@berth/api/testing";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { closeBrowser, closeContexts, expectAccessible, launchBrowser, newContext, Screenshots } from "./browser.ts";
import { LoginPage, PasswordPage } from "./pages/login-page.ts";
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
    expect(await visitor.getByTestId("login-heading").textContent()).toBe("Sign in to Berth");
    expect(await visitor.getByTestId("signup-link").count()).toBe(0);
    await visitor.goto("/signup");
    await visitor.getByTestId("signup-closed").waitFor();
    current = admin;
  });

  it("saves the branding and the console takes it at once", async () => {
    await admin.getByTestId("admin-menu").click();
    await admin.getByRole("link", { name: "System settings", exact: true }).click();
    await admin.getByRole("heading", { name: "System settings", level: 1 }).waitFor();
    await admin.getByTestId("branding-form").waitFor();
    await expectAccessible(admin, "settings");
    await shots.take(admin, "settings-defaults");

    // Bad input first: the API's envelope says what to fix, nothing is saved.
    await admin.getByLabel("Support link").fill("ftp://help.example.org");
    await admin.getByTestId("branding-save").click();
    await admin.getByText("must be an http(s) URL").waitFor();
    expect((await readSystemSettings(stack.db.db)).branding.support_url).toBeNull();

    await admin.getByLabel("Product name").fill("Acme GPU Cloud");
    await admin.getByLabel("Accent colour").fill("#7a2e8e");
    await admin.getByLabel("Support link").fill("https://help.example.org");
    await admin.getByLabel(/^Logo/).setInputFiles({ name: "logo.png", mimeType: "image/png", buffer: LOGO });
    await admin.getByTestId("branding-save").click();
    await admin.getByTestId("saved-branding").waitFor();
    expect(await admin.getByTestId("brand-name").textContent()).toBe("Acme GPU Cloud");
    await admin.getByTestId("brand-logo").waitFor();
    expect(await admin.title()).toBe("Acme GPU Cloud");
    const accent = await admin.evaluate(() =>
      getComputedStyle(document.documentElement).getPropertyValue("--berth-brand-accent").trim(),
    );
    expect(accent).toBe("#7a2e8e");
    await admin.getByTestId("current-logo").waitFor();
    await expectAccessible(admin, "branded settings");
    await shots.take(admin, "branded");
  });

  it("opens sign-up to one domain with approval, and sets the placement policy", async () => {
    await admin.getByLabel("Anyone, after an administrator approves").check();
    await admin.getByLabel("Allowed email domains").fill("Example.org\n");
    await admin.getByTestId("signup-policy-save").click();
    await admin.getByTestId("saved-signup").waitFor();
    await admin.getByLabel("Spread: the emptiest cluster").check();
    await admin.getByTestId("placement-save").click();
    await admin.getByTestId("saved-placement").waitFor();
    const s = await readSystemSettings(stack.db.db);
    expect(s.signup).toMatchObject({ policy: "approval", allowed_domains: ["example.org"] });
    expect(s.placement.policy).toBe("spread");
  });

  it("brands the sign-in page; a visitor of another domain is refused, one of the allowed domain waits", async () => {
    const visitor = await aPage();
    await new LoginPage(visitor).open();
    await expect.poll(async () => visitor.getByTestId("login-heading").textContent()).toBe("Sign in to Acme GPU Cloud");
    await visitor.getByTestId("login-logo").waitFor();
    await expectAccessible(visitor, "branded sign-in");
    await shots.take(visitor, "branded-sign-in");

    await visitor.getByTestId("signup-link").click();
    await visitor.getByTestId("signup-form").waitFor();
    const fill = async (email: string, password: string, repeat = password) => {
      await visitor.getByLabel("Email").fill(email);
      await visitor.getByLabel("Password", { exact: true }).fill(password);
      await visitor.getByLabel("Password again").fill(repeat);
      await visitor.getByTestId("signup-submit").click();
    };
    await fill(VISITOR.email, VISITOR.password, "something else entirely");
    await visitor.getByTestId("signup-problem").waitFor();
    await fill("mallory@elsewhere.test", "mallorys-password-1");
    await visitor.getByTestId("error-message").waitFor();
    expect(await visitor.getByTestId("error-message").textContent()).toContain("example.org");
    await expectAccessible(visitor, "sign-up refused");
    await shots.take(visitor, "sign-up-refused");
    await fill(VISITOR.email, VISITOR.password);
    await visitor.getByTestId("signup-done").waitFor();
    expect(await visitor.getByTestId("signup-done").getAttribute("data-status")).toBe("pending_approval");
    await expectAccessible(visitor, "sign-up waiting");
    await shots.take(visitor, "sign-up-waiting");

    // Not before approval: it answers like a wrong password.
    await new LoginPage(visitor).open();
    await new LoginPage(visitor).signIn(VISITOR.email, VISITOR.password);
    await visitor.getByTestId("error-message").waitFor();
  });

  it("approves the visitor from the queue, who then signs in", async () => {
    current = admin;
    await admin.getByTestId("settings-tab-signups").click();
    const row = admin.locator(`[data-testid="signup-request"][data-email="${VISITOR.email}"]`);
    await row.waitFor();
    expect(await admin.getByTestId("signup-request").count()).toBe(1);
    await expectAccessible(admin, "queue");
    await shots.take(admin, "queue");
    await row.getByTestId("approve").click();
    await admin.getByTestId("signup-notice").waitFor();
    await admin.getByText("Nobody is waiting").waitFor();

    const visitor = await aPage();
    const login = new LoginPage(visitor);
    await login.open();
    await login.signIn(VISITOR.email, VISITOR.password);
    await visitor.getByTestId("account-menu").waitFor();
    expect(await visitor.getByTestId("brand-name").textContent()).toBe("Acme GPU Cloud");
    // A member is offered no system settings, and the settings route sends them home.
    expect(await visitor.getByTestId("admin-menu").count()).toBe(0);
    expect(await visitor.getByRole("link", { name: "System settings" }).count()).toBe(0);
    await visitor.goto("/admin/settings");
    await visitor.waitForURL((u) => u.pathname === "/dashboard");
    await shots.take(visitor, "member-signed-in");
  });
});
