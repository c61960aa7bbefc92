// The people of a journey, each signed in through the login page in a browser context of their own.
import { SHELL_TEST_IDS } from "@berth/console/test-ids/shell";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { closeContexts, newContext } from "../browser.ts";
import { LoginPage } from "./login-page.ts";

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
