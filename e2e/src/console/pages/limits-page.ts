// Page object of Limits (console/src/views/quotas-view/): the member's effective limits and her quota requests.
import { QUOTAS_TEST_IDS as Q } from "@berth/console/test-ids/quotas";
import type { Page } from "playwright-core";
import { Shell } from "./shell.ts";

export class LimitsPage {
  readonly page: Page;
  readonly shell: Shell;
  constructor(page: Page) {
    this.page = page;
    this.shell = new Shell(page);
  }

  /** Through the navigation's link (no full page load). */
  async openFromNavigation(): Promise<void> {
    await this.shell.link("Limits").click();
  }

  /** A limit's row, by its name (max_gpus_per_user, …). */
  limit(name: string) {
    return this.page.locator(`berth-quotas-view [data-testid="${Q.limitRow}"][data-limit="${name}"]`);
  }
  limitValue(name: string) {
    return this.limit(name).getByTestId(Q.limitValue).textContent();
  }
  /** The policy the limit comes from (global, user-…). */
  limitPolicy(name: string) {
    return this.limit(name).getByTestId(Q.limitPolicy).textContent();
  }

  async askMore(limit: string): Promise<void> {
    await this.page.getByTestId(Q.askMore(limit)).click();
  }
  askValue() {
    return this.page.getByLabel("New value");
  }
  async send(): Promise<void> {
    await this.page.getByTestId(Q.askSend).click();
  }
  askProblem() {
    return this.page.getByTestId(Q.askProblem);
  }

  /** The first of her requests (the newest). */
  firstRequest() {
    return this.page.getByTestId(Q.requestRow).first();
  }
  request(id: string) {
    return this.page.locator(`[data-testid="${Q.requestRow}"][data-request-id="${id}"]`);
  }
  requestStatus(id: string) {
    return this.request(id).getByTestId(Q.requestStatus).textContent();
  }

  /** The administrators' way to the inbox. */
  async openInbox(): Promise<void> {
    await this.page.getByTestId(Q.inboxLink).click();
  }
}
