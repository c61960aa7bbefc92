// Page object of the sign-in and password pages. Test ids come from the console (@berth/console/test-ids/*).
import { LOGIN_TEST_IDS } from "@berth/console/test-ids/login";
import { SHELL_TEST_IDS } from "@berth/console/test-ids/shell";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { closeContexts, newContext } from "../browser.ts";

export class LoginPage {
  readonly page: Page;
  constructor(page: Page) {
    this.page = page;
  }

  async open(path = "/login"): Promise<void> {
    await this.page.goto(path);
    await this.page.getByTestId(LOGIN_TEST_IDS.loginForm).waitFor();
  }

  async signIn(email: string, password: string): Promise<void> {
    await this.page.getByLabel("Email").fill(email);
    await this.page.getByLabel("Password", { exact: true }).fill(password);
    await this.page.getByTestId(LOGIN_TEST_IDS.loginSubmit).click();
  }

  errorMessage() {
    return this.page.getByTestId(SHELL_TEST_IDS.errorMessage);
  }

  errorRequestId() {
    return this.page.getByTestId(SHELL_TEST_IDS.errorRequestId);
  }

  /** Waits for the sign-in form (a signed-out visitor sent here from wherever they were going). */
  async waitFor(): Promise<void> {
    await this.page.getByTestId(LOGIN_TEST_IDS.loginForm).waitFor();
  }

  /** The page's heading and logo (the branding), and its link to sign up (when sign-up is open). */
  heading() {
    return this.page.getByTestId(LOGIN_TEST_IDS.loginHeading);
  }
  logo() {
    return this.page.getByTestId(LOGIN_TEST_IDS.loginLogo);
  }
  signupLink() {
    return this.page.getByTestId(LOGIN_TEST_IDS.signupLink);
  }

  /** The notice that the session expired. */
  expiredNotice() {
    return this.page.getByTestId(LOGIN_TEST_IDS.expiredNotice);
  }
}

export class PasswordPage {
  readonly page: Page;
  constructor(page: Page) {
    this.page = page;
  }

  async waitFor(): Promise<void> {
    await this.page.getByTestId(LOGIN_TEST_IDS.passwordForm).waitFor();
  }

  /** The notice that this first password must be changed. */
  forcedNotice() {
    return this.page.getByTestId(LOGIN_TEST_IDS.forcedPasswordNotice);
  }

  /** What the page found wrong with the new password, before the API. */
  problems() {
    return this.page.getByTestId(LOGIN_TEST_IDS.passwordProblems);
  }

  async change(current: string, next: string, repeat = next): Promise<void> {
    await this.page.getByLabel("Current password").fill(current);
    await this.page.getByLabel("New password", { exact: true }).fill(next);
    await this.page.getByLabel("New password again").fill(repeat);
    await this.page.getByTestId(LOGIN_TEST_IDS.passwordSubmit).click();
  }
}

/** Whoever signs in through the login page: an email and the password that opens the console. */
export interface Visitor {
  email: string;
  password: string;
}

/**
 * The people of one journey, each in a fresh browser context, signed in through the login page and landed
 * on the dashboard: a click before the app has gone there would be undone by that navigation.
 */
export class Visitors {
  readonly #contexts: BrowserContext[] = [];
  /** The page of whoever signed in last: the one a failing test's screenshot shows. */
  current: Page | undefined;

  readonly #browser: () => Browser;
  readonly #baseURL: () => string;

  /** The browser and the console's address are read at sign-in: journeys start them in `beforeAll`. */
  constructor(browser: () => Browser, baseURL: () => string) {
    this.#browser = browser;
    this.#baseURL = baseURL;
  }

  async signIn(
    who: Visitor,
    opts: { viewport?: { width: number; height: number }; prepare?: (c: BrowserContext) => Promise<unknown> } = {},
  ): Promise<Page> {
    const context = await newContext(this.#browser(), this.#baseURL(), opts.viewport);
    this.#contexts.push(context);
    await opts.prepare?.(context);
    const page = await context.newPage();
    const login = new LoginPage(page);
    await login.open();
    await login.signIn(who.email, who.password);
    await page.getByTestId(SHELL_TEST_IDS.accountMenu).waitFor();
    await page.waitForURL((u) => u.pathname === "/dashboard");
    this.current = page;
    return page;
  }

  async closeAll(timeoutMs?: number): Promise<void> {
    await closeContexts(this.#contexts.splice(0), timeoutMs);
  }
}
