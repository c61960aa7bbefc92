// Page object of the sign-in and password pages. Test ids are the console's own (data-testid).
import type { Page } from "playwright-core";

export class LoginPage {
  readonly page: Page;
  constructor(page: Page) {
    this.page = page;
  }

  async open(path = "/login"): Promise<void> {
    await this.page.goto(path);
    await this.page.getByTestId("login-form").waitFor();
  }

  async signIn(email: string, password: string): Promise<void> {
    await this.page.getByLabel("Email").fill(email);
    await this.page.getByLabel("Password", { exact: true }).fill(password);
    await this.page.getByTestId("login-submit").click();
  }

  errorMessage() {
    return this.page.getByTestId("error-message");
  }
}

export class PasswordPage {
  readonly page: Page;
  constructor(page: Page) {
    this.page = page;
  }

  async waitFor(): Promise<void> {
    await this.page.getByTestId("password-form").waitFor();
  }

  async change(current: string, next: string, repeat = next): Promise<void> {
    await this.page.getByLabel("Current password").fill(current);
    await this.page.getByLabel("New password", { exact: true }).fill(next);
    await this.page.getByLabel("New password again").fill(repeat);
    await this.page.getByTestId("password-submit").click();
  }
}
