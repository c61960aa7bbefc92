// Page object of the public sign-up page. Test ids come from the console (@berth/console/test-ids/*).
import { SETTINGS_TEST_IDS as T } from "@berth/console/test-ids/settings";
import type { Page } from "playwright-core";
import { Shell } from "./shell.ts";

export class SignupPage {
  readonly page: Page;
  readonly shell: Shell;
  constructor(page: Page) {
    this.page = page;
    this.shell = new Shell(page);
  }

  closed() {
    return this.page.getByTestId(T.signupClosed);
  }
  form() {
    return this.page.getByTestId(T.signupForm);
  }
  async signUp(email: string, password: string, repeat = password): Promise<void> {
    await this.page.getByLabel("Email").fill(email);
    await this.page.getByLabel("Password", { exact: true }).fill(password);
    await this.page.getByLabel("Password again").fill(repeat);
    await this.page.getByTestId(T.signupSubmit).click();
  }
  problem() {
    return this.page.getByTestId(T.signupProblem);
  }
  done() {
    return this.page.getByTestId(T.signupDone);
  }
}
