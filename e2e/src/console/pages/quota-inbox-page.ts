// Page object of the administrators' inbox of quota requests (console/src/views/quota-inbox-view/).
import { QUOTA_INBOX_TEST_IDS as I } from "@berth/console/test-ids/quota-inbox";
import type { Page } from "playwright-core";

export class QuotaInboxPage {
  readonly page: Page;
  constructor(page: Page) {
    this.page = page;
  }

  /** A request's row, by its id; its data-status is the request's status. */
  row(requestId: string) {
    return this.page.locator(`[data-testid="${I.row}"][data-request-id="${requestId}"]`);
  }
  /** Opens the decide panel of a request. */
  async decide(requestId: string): Promise<void> {
    await this.row(requestId).getByTestId(I.decide).click();
    await this.page.getByTestId(I.decidePanel).waitFor();
  }
  async grant(limit: string, value: string): Promise<void> {
    await this.page.getByTestId(I.grant(limit)).fill(value);
  }
  grantProblem() {
    return this.page.getByTestId(I.grantProblem);
  }
  async note(text: string): Promise<void> {
    await this.page.getByTestId(I.note).fill(text);
  }
  async approve(): Promise<void> {
    await this.page.getByTestId(I.approve).click();
  }
  /** The status filter: pending (the default), any, or one status. */
  async filterStatus(status: string): Promise<void> {
    await this.page.getByTestId(I.filterStatus).selectOption(status);
  }
}
