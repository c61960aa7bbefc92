// Page object of the storage pools' admin page (console/src/views/admin-pools-view/): rows found by the
// shared test ids, forms and buttons by their accessible names.
import { POOLS_TEST_IDS as P } from "@berth/console/test-ids/pools";
import type { Page } from "playwright-core";
import { Shell } from "./shell.ts";

export class PoolsPage {
  readonly page: Page;
  readonly shell: Shell;
  constructor(page: Page) {
    this.page = page;
    this.shell = new Shell(page);
  }

  /** From the admin menu. */
  async openFromMenu(): Promise<void> {
    await this.shell.openAdmin("Storage pools");
  }
  noPool() {
    return this.page.getByText("No pool yet");
  }
  async add(p: { name: string; clusterId: string; storageClass: string }): Promise<void> {
    await this.page.getByLabel("Name", { exact: true }).fill(p.name);
    await this.page.getByLabel("Storage server's cluster").selectOption(p.clusterId);
    await this.page.getByLabel("Storage class").fill(p.storageClass);
    await this.page.getByRole("button", { name: "Add pool" }).click();
  }
  row(name: string) {
    return this.page.locator(`[data-testid="${P.row}"][data-pool="${name}"]`);
  }
  /**
   * Where the pool's reading comes from (csi, …), or "" before the first report: read without waiting,
   * so a caller's poll keeps its own deadline.
   */
  async sourceNow(name: string): Promise<string> {
    const source = this.row(name).getByTestId(P.source);
    return (await source.count()) > 0 ? ((await source.textContent()) ?? "") : "";
  }
  capacity(name: string) {
    return this.row(name).getByTestId(P.capacity).textContent();
  }
  via(name: string) {
    return this.row(name).getByTestId(P.via).textContent();
  }
}
