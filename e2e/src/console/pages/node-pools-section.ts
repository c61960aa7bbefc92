// The node pools section of a cluster's page (console/src/components/node-pools).
import { NODE_POOLS_TEST_IDS as T } from "@berth/console/test-ids/node-pools";
import type { Locator, Page } from "playwright-core";

export class NodePoolsSection {
  readonly page: Page;
  constructor(page: Page) {
    this.page = page;
  }

  get root(): Locator {
    return this.page.getByTestId(T.section);
  }

  /** On a cluster's page (ClustersPage.openCluster): the section has loaded. */
  async ready(): Promise<void> {
    await this.root.waitFor();
  }

  async make(name: string, selector: string): Promise<void> {
    const form = this.root.getByTestId(T.createForm);
    await form.getByLabel("Name").fill(name);
    await form.getByLabel("Nodes with the label").fill(selector);
    await form.getByRole("button", { name: "Make the pool" }).click();
  }

  row(name: string): Locator {
    return this.root.locator(`[data-testid="${T.row}"][data-pool="${name}"]`);
  }

  async nodesOf(name: string): Promise<string> {
    return (await this.row(name).getByTestId(T.nodes).innerText()).trim();
  }

  async grant(pool: string, organization: string): Promise<void> {
    const form = this.row(pool).getByTestId(T.grantForm);
    await form.getByRole("combobox").selectOption({ label: organization });
    await form.getByRole("button", { name: "Grant" }).click();
  }

  /** In the project form: picks the organization whose projects it then offers. */
  async pickProjectOrganization(pool: string, organization: string): Promise<void> {
    await this.row(pool)
      .getByTestId(T.grantProjectForm)
      .getByLabel(`Organization of the project to grant ${pool} to`)
      .selectOption({ label: organization });
  }

  /** Grants the pool to one project: its organization first, then the project (once they have loaded). */
  async grantToProject(pool: string, organization: string, project: string): Promise<void> {
    await this.pickProjectOrganization(pool, organization);
    const form = this.row(pool).getByTestId(T.grantProjectForm);
    await form.getByLabel(`Project to grant ${pool} to`, { exact: true }).selectOption({ label: project });
    await form.getByRole("button", { name: "Grant to this project" }).click();
  }

  /** The projects the project form offers now (for the organization it has picked). */
  async projectsOffered(pool: string): Promise<string[]> {
    const form = this.row(pool).getByTestId(T.grantProjectForm);
    return form.getByLabel(`Project to grant ${pool} to`, { exact: true }).locator("option").allInnerTexts();
  }

  /** Said when the organization picked in the project form has no projects. */
  noProjects(pool: string): Locator {
    return this.row(pool).getByTestId(T.noProjects);
  }

  /** Grants the pool to one person, picked by the email of their account. */
  async grantToPerson(pool: string, email: string): Promise<void> {
    const form = this.row(pool).getByTestId(T.grantUserForm);
    await form.getByLabel(`Email of the person to grant ${pool} to`).fill(email);
    await form.getByRole("button", { name: "Grant to this person" }).click();
  }

  grants(pool: string): Locator {
    return this.row(pool).getByTestId(T.grant);
  }

  async removeGrant(pool: string, grantee: string): Promise<void> {
    await this.row(pool)
      .getByRole("button", { name: `Remove the grant of ${pool} to ${grantee}` })
      .click();
    await this.page.getByRole("button", { name: "Remove the grant", exact: true }).click();
  }

  notice(): Locator {
    return this.root.getByTestId(T.notice);
  }

  /** Text shown in the section's error panel (inside its shadow root, which getByText reaches). */
  error(text: RegExp): Locator {
    return this.root.getByText(text);
  }
}
