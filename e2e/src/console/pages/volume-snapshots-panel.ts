// Page object of a volume's snapshots on the Volumes page (console/src/views/volumes-view/): the panel
// that opens below the volume's row.
import { VOLUMES_TEST_IDS as V } from "@berth/console/test-ids/volumes";
import type { Locator, Page } from "playwright-core";

export class VolumeSnapshotsPanel {
  readonly page: Page;
  readonly volume: string;
  constructor(page: Page, volumeName: string) {
    this.page = page;
    this.volume = volumeName;
  }

  async open(): Promise<void> {
    await this.page.getByRole("button", { name: `Snapshots of ${this.volume}`, exact: true }).click();
    await this.panel().waitFor();
  }

  panel(): Locator {
    return this.page.getByTestId(V.snapshotsPanel);
  }

  /** The panel's empty state. */
  none(): Locator {
    return this.page.getByTestId(V.noSnapshots);
  }

  async take(name: string): Promise<void> {
    await this.panel().getByLabel("Snapshot name").fill(name);
    await this.panel().getByRole("button", { name: "Take snapshot" }).click();
    await this.row(name).waitFor();
  }

  row(name: string): Locator {
    return this.panel().getByTestId(V.snapshotRow).filter({ hasText: name });
  }

  async state(name: string): Promise<string> {
    return ((await this.row(name).getByTestId(V.snapshotState).textContent()) ?? "").trim();
  }

  async idOf(name: string): Promise<string> {
    return (await this.row(name).getAttribute("data-snapshot-id")) ?? "";
  }

  async restore(name: string, into: string): Promise<void> {
    await this.row(name).getByLabel("New volume", { exact: true }).fill(into);
    await this.row(name)
      .getByRole("button", { name: `Restore ${name} into a new volume` })
      .click();
  }

  async delete(name: string): Promise<void> {
    await this.row(name)
      .getByRole("button", { name: `Delete snapshot ${name}` })
      .click();
    await this.page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
  }

  /** The page's notice or error after an action. */
  notice(): Locator {
    return this.page.getByTestId(V.notice);
  }
}
