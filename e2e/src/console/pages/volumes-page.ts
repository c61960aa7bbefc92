// Page object of the Volumes page (console/src/views/volumes-view/): rows found by the shared test ids,
// forms and buttons by their accessible names.
import { VOLUMES_TEST_IDS as V } from "@berth/console/test-ids/volumes";
import type { Page } from "playwright-core";
import { Shell } from "./shell.ts";

export class VolumesPage {
  readonly page: Page;
  readonly shell: Shell;
  constructor(page: Page) {
    this.page = page;
    this.shell = new Shell(page);
  }

  /** Through the navigation's link (no full page load: the live feed's stream stays as it is). */
  async openFromNavigation(): Promise<void> {
    await this.shell.link("Volumes").click();
  }
  heading() {
    return this.page.getByRole("heading", { name: "Volumes", level: 1 });
  }
  /** The list's empty state. */
  noVolume() {
    return this.page.getByText("No volume yet");
  }

  async create(name: string, sizeGb: string): Promise<void> {
    await this.page.getByLabel("Name", { exact: true }).fill(name);
    await this.page.getByLabel("Size (GB)", { exact: true }).fill(sizeGb);
    await this.page.getByRole("button", { name: "Create volume" }).click();
  }

  /** A volume's row, by its id; its data-volume-id is the id. */
  row(volumeId: string) {
    return this.page.locator(`[data-testid="${V.row}"][data-volume-id="${volumeId}"]`);
  }
  rowNamed(name: string) {
    return this.page.getByTestId(V.row).filter({ hasText: name });
  }
  deletedRow(volumeId: string) {
    return this.page.locator(`[data-testid="${V.deletedRow}"][data-volume-id="${volumeId}"]`);
  }
  size(volumeId: string) {
    return this.row(volumeId).getByTestId(V.size).textContent();
  }
  /** Where its claim is bound ("not bound", "claim on clu_…"). */
  bound(volumeId: string) {
    return this.row(volumeId).getByTestId(V.bound).textContent();
  }
  /** The mark of a volume shared with the reader ("Shared with you · read-only"). */
  shared(volumeId: string) {
    return this.row(volumeId).getByTestId(V.shared).textContent();
  }

  async grow(name: string, sizeGb: string): Promise<void> {
    await this.page.getByRole("button", { name: `Edit ${name}` }).click();
    await this.page.getByLabel("Size (GB, grow only)").fill(sizeGb);
    await this.page.getByRole("button", { name: "Save" }).click();
  }
  deleteButton(name: string) {
    return this.page.getByRole("button", { name: `Delete ${name}` });
  }
  /** Delete, confirmed in the dialog. */
  async delete(name: string): Promise<void> {
    await this.deleteButton(name).click();
    await this.page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
  }
  async undoDelete(name: string): Promise<void> {
    await this.page.getByRole("button", { name: `Undo delete of ${name}` }).click();
  }
}
