// Page object of the catalog's admin pages (console/src/views/admin-catalog-view/): offerings by tier,
// presets, images, policies and build clusters, each a tab with an editor for super_admins.
import { CATALOG_TEST_IDS as C } from "@berth/console/test-ids/catalog";
import type { Page } from "playwright-core";
import { Shell } from "./shell.ts";

export type CatalogTab = "offerings" | "presets" | "images" | "policies" | "build-clusters";

export class CatalogPage {
  readonly page: Page;
  readonly shell: Shell;
  constructor(page: Page) {
    this.page = page;
    this.shell = new Shell(page);
  }

  /** From the admin menu. */
  async openFromMenu(): Promise<void> {
    await this.shell.adminMenu().click();
    await this.shell.link("Catalog").click();
  }
  async tab(name: CatalogTab): Promise<void> {
    await this.page.getByTestId(C.tab(name)).click();
  }
  /** The heading over a tier's offerings. */
  tier(name: string) {
    return this.page.getByTestId(C.tier(name));
  }

  offeringRows() {
    return this.page.getByTestId(C.offeringRow);
  }
  /** The share of a card an offering's row names ("1/8 card"). */
  offeringShare(name: string) {
    return this.page
      .locator(`[data-testid="${C.offeringRow}"][data-name="${name}"]`)
      .getByTestId(C.offeringShare)
      .textContent();
  }
  async toggleOffering(name: string): Promise<void> {
    await this.page.getByTestId(C.offeringToggle(name)).click();
  }

  /** A row of the presets, images, policies or build clusters tab, by its name. */
  row(name: string) {
    return this.page.locator(`[data-testid="${C.row}"][data-name="${name}"]`);
  }
  /** The rows whose name starts so (a policy an approval wrote: user-usr-…). */
  rowStartingWith(prefix: string) {
    return this.page.locator(`[data-testid="${C.row}"][data-name^="${prefix}"]`);
  }
  buildMark(cluster: string) {
    return this.row(cluster).getByTestId(C.buildMark).textContent();
  }
  async toggleBuildMark(cluster: string): Promise<void> {
    await this.row(cluster).getByTestId(C.buildMarkToggle).click();
  }
  buildMarkToggles() {
    return this.page.getByTestId(C.buildMarkToggle);
  }
  buildsNotAvailable() {
    return this.page.getByTestId(C.buildsNotAvailable);
  }

  /** "New" on the tab (there for super_admins only). */
  newButton() {
    return this.page.getByTestId(C.new);
  }
  /** The "Change" buttons of every row (there for super_admins only). */
  editButtons() {
    return this.page.locator(`[data-testid^="${C.edit("")}"]`);
  }
  async edit(name: string): Promise<void> {
    await this.page.getByTestId(C.edit(name)).click();
  }
  /** Fills the editor's fields by key, in order. */
  async fill(fields: Record<string, string>): Promise<void> {
    for (const [key, value] of Object.entries(fields)) await this.page.getByTestId(C.field(key)).fill(value);
  }
  async save(): Promise<void> {
    await this.page.getByTestId(C.save).click();
  }
  fieldProblem() {
    return this.page.getByTestId(C.fieldProblem);
  }
}
