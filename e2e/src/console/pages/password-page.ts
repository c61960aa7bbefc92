// Page object of the password page (console/src/views/password-view/): the change a first sign-in must make.
import { LOGIN_TEST_IDS } from "@berth/console/test-ids/login";
import type { Page } from "playwright-core";

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
