// The MIG partitions section of a cluster's page (console/src/components/mig-layouts).
import { MIG_LAYOUTS_TEST_IDS as T } from "@berth/console/test-ids/mig-layouts";
import type { Locator, Page } from "playwright-core";

export class MigLayoutsSection {
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

  /** The section's empty state: no mark on this cluster yet. */
  noneMarked(): Locator {
    return this.root.getByText("No MIG partition marked");
  }

  async mark(o: { gpuModel: string; selector: string; profiles: string }): Promise<void> {
    const form = this.root.getByTestId(T.createForm);
    await form.getByLabel("GPU model").selectOption(o.gpuModel);
    await form.getByLabel("Nodes with the label").fill(o.selector);
    await form.getByLabel("Instances per card").fill(o.profiles);
    await form.getByRole("button", { name: "Mark the nodes" }).click();
  }

  row(selector: string): Locator {
    return this.root.locator(`[data-testid="${T.row}"][data-selector="${selector}"]`);
  }

  rows(): Locator {
    return this.root.getByTestId(T.row);
  }

  async nodesOf(selector: string): Promise<string> {
    return (await this.row(selector).getByTestId(T.nodes).innerText()).trim();
  }

  async remove(selector: string): Promise<void> {
    await this.row(selector)
      .getByRole("button", { name: `Remove the MIG mark ${selector}` })
      .click();
    await this.page.getByRole("button", { name: "Remove", exact: true }).click();
  }

  notice(): Locator {
    return this.root.getByTestId(T.notice);
  }

  /** The form's own refusal, before anything is sent. */
  formError(): Locator {
    return this.root.getByTestId(T.formError);
  }

  /** Text shown in the section's error panel (inside its shadow root, which getByText reaches). */
  error(text: RegExp): Locator {
    return this.root.getByText(text);
  }
}
