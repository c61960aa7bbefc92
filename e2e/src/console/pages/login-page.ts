// Page object of the sign-in page (console/src/views/login-view/). Test ids come from the console
// (@berth/console/test-ids/*).
import { LOGIN_TEST_IDS } from "@berth/console/test-ids/login";
import { SHELL_TEST_IDS } from "@berth/console/test-ids/shell";
import type { Page } from "playwright-core";

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
