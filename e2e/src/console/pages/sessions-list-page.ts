// Page object of the sessions list (console/src/views/sessions-view/).
import { SESSIONS_TEST_IDS } from "@berth/console/test-ids/sessions";
import { SHELL_TEST_IDS } from "@berth/console/test-ids/shell";
import type { Page } from "playwright-core";

export class SessionsListPage {
  readonly page: Page;
  constructor(page: Page) {
    this.page = page;
  }
  async open(query = ""): Promise<void> {
    await this.page.goto(`/sessions${query}`);
    await this.page.getByRole("heading", { name: "Sessions", level: 1 }).waitFor();
  }
  row(id: string) {
    return this.page.locator(`[data-testid="${SESSIONS_TEST_IDS.row}"][data-session-id="${id}"]`);
  }
  async waitForPhase(id: string, phase: string, timeout = 30_000): Promise<void> {
    await this.page
      .locator(`[data-testid="${SESSIONS_TEST_IDS.row}"][data-session-id="${id}"][data-phase="${phase}"]`)
      .waitFor({ timeout });
  }
  /** The list's "nothing here yet" state. */
  emptyState() {
    return this.page.getByTestId(SHELL_TEST_IDS.emptyState);
  }
  liveMode() {
    return this.page.getByTestId(SHELL_TEST_IDS.liveIndicator).getAttribute("data-mode");
  }
}
