// Page object of the admin clusters pages.
import type { Page } from "playwright-core";

export interface TokenCredential {
  server: string;
  token: string;
  ca_data?: string;
}

export class ClustersPage {
  readonly page: Page;
  constructor(page: Page) {
    this.page = page;
  }

  async open(): Promise<void> {
    await this.page.goto("/admin/clusters");
    await this.page.getByRole("heading", { name: "Clusters", level: 1 }).waitFor();
  }

  async register(name: string, sessionDomain: string, cred: TokenCredential): Promise<void> {
    await this.page.getByTestId("register-open").click();
    await this.page.getByLabel("Name").fill(name);
    await this.page.getByLabel("Session domain").fill(sessionDomain);
    await this.page.getByLabel("API server address").fill(cred.server);
    await this.page.getByLabel("Bearer token").fill(cred.token);
    if (cred.ca_data) await this.page.getByLabel("CA certificate (PEM, optional)").fill(cred.ca_data);
    await this.page.getByTestId("register-submit").click();
  }

  check(key: string) {
    return this.page.getByTestId(`check-${key}`);
  }

  row(name: string) {
    return this.page.getByTestId("cluster-row").filter({ hasText: name });
  }
}
