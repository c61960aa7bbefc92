// Page object of one cluster's admin page (console/src/views/admin-cluster-detail-view/). Test ids come
// from the console (@berth/console/test-ids/*).
import { CLUSTERS_TEST_IDS as T } from "@berth/console/test-ids/clusters";
import { SHELL_TEST_IDS } from "@berth/console/test-ids/shell";
import type { Page } from "playwright-core";
import { Shell } from "./shell.ts";

/** One cluster's page: its connection test, session domain, nodes and deregistration. */
export class ClusterPage {
  readonly page: Page;
  readonly shell: Shell;
  constructor(page: Page) {
    this.page = page;
    this.shell = new Shell(page);
  }

  async testConnection(timeout: number): Promise<string | null> {
    await this.page.getByTestId(T.connectionTest).click();
    const status = this.page.getByTestId(T.connectionTestStatus);
    await status.waitFor({ timeout });
    return status.textContent();
  }

  async setSessionDomain(domain: string): Promise<void> {
    await this.page.getByTestId(T.sessionDomainEdit).click();
    await this.page.getByTestId(T.sessionDomainInput).fill(domain);
    await this.page.getByTestId(T.sessionDomainSave).click();
  }
  sessionDomain() {
    return this.page.getByTestId(T.sessionDomain);
  }

  deregisterButton() {
    return this.page.getByTestId(T.deregister);
  }
  async typeNameToDeregister(name: string): Promise<void> {
    await this.page.getByTestId(T.deregisterName).fill(name);
  }
  async deregister(name: string): Promise<void> {
    await this.typeNameToDeregister(name);
    await this.deregisterButton().click();
    await this.page.getByTestId(SHELL_TEST_IDS.confirmOk).click();
  }
}
