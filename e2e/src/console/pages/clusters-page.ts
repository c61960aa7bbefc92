// Page object of the admin clusters list with its registration form (console/src/views/admin-clusters-view/).
// Test ids come from the console (@berth/console/test-ids/*).
import { CLUSTERS_TEST_IDS as T } from "@berth/console/test-ids/clusters";
import { SHELL_TEST_IDS } from "@berth/console/test-ids/shell";
import type { Page } from "playwright-core";
import { ClusterPage } from "./cluster-page.ts";
import { Shell } from "./shell.ts";

export interface TokenCredential {
  server: string;
  token: string;
  ca_data?: string;
}

export class ClustersPage {
  readonly page: Page;
  readonly shell: Shell;
  constructor(page: Page) {
    this.page = page;
    this.shell = new Shell(page);
  }

  /** A cluster's page's session gateway section (its latency, errors and requests panels). */
  gatewayPanels() {
    return this.page.getByTestId(T.gatewayPanels);
  }

  async open(): Promise<void> {
    await this.page.goto("/admin/clusters");
    await this.page.getByRole("heading", { name: "Clusters", level: 1 }).waitFor();
  }

  async register(name: string, sessionDomain: string, cred: TokenCredential): Promise<void> {
    await this.page.getByTestId(T.registerOpen).click();
    await this.page.getByLabel("Name").fill(name);
    await this.page.getByLabel("Session domain").fill(sessionDomain);
    await this.page.getByLabel("API server address").fill(cred.server);
    await this.page.getByLabel("Bearer token").fill(cred.token);
    if (cred.ca_data) await this.page.getByLabel("CA certificate (PEM, optional)").fill(cred.ca_data);
    await this.page.getByTestId(T.registerSubmit).click();
  }

  /** Empties the registration form's name and closes the form. */
  async closeRegistration(): Promise<void> {
    await this.page.getByLabel("Name").fill("");
    await this.page.getByRole("button", { name: "Close" }).click();
  }

  refused() {
    return this.page.getByTestId(T.registerRefused);
  }
  refusedErrorPanel() {
    return this.refused().getByTestId(SHELL_TEST_IDS.errorPanel);
  }
  refusedRequestId() {
    return this.refused().getByTestId(SHELL_TEST_IDS.errorRequestId);
  }
  accepted() {
    return this.page.getByTestId(T.registerAccepted);
  }
  operatorToken() {
    return this.page.getByTestId(T.operatorToken);
  }

  check(key: string) {
    return this.page.getByTestId(T.check(key));
  }

  table() {
    return this.page.getByTestId(T.clustersTable);
  }

  row(name: string) {
    return this.page.getByTestId(T.clusterRow).filter({ hasText: name });
  }

  async openCluster(name: string): Promise<ClusterPage> {
    await this.row(name).getByRole("link", { name }).click();
    return new ClusterPage(this.page);
  }
}
