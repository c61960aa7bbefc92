// Page object of the Webhooks page (console/src/views/webhooks-view/): endpoints, their secret shown
// once, deliveries.
import { WEBHOOKS_TEST_IDS as T } from "@berth/console/test-ids/webhooks";
import type { Page } from "playwright-core";
import { Shell } from "./shell.ts";

export class WebhooksPage {
  readonly page: Page;
  readonly shell: Shell;
  constructor(page: Page) {
    this.page = page;
    this.shell = new Shell(page);
  }

  async openFromMenu(): Promise<void> {
    await this.shell.openAdmin("Webhooks");
  }

  async add(url: string, description?: string): Promise<void> {
    await this.page.getByLabel("Endpoint URL (https)").fill(url);
    if (description !== undefined) await this.page.getByLabel("Description").fill(description);
    await this.page.getByRole("button", { name: "Add endpoint" }).click();
  }

  /** The signing secret shown once after an add or a rotation. */
  async shownSecret(): Promise<string> {
    const shown = this.page.getByTestId(T.secret);
    await shown.waitFor();
    return (await shown.textContent()) ?? "";
  }

  async storedSecret(): Promise<void> {
    await this.page.getByRole("button", { name: "I have stored it" }).click();
  }

  rows() {
    return this.page.getByTestId(T.row);
  }

  async test(url: string): Promise<void> {
    await this.page.getByRole("button", { name: `Test ${url}` }).click();
  }

  async showDeliveries(url: string): Promise<void> {
    await this.page.getByRole("button", { name: `Deliveries of ${url}` }).click();
  }

  /** Refreshes the deliveries and reads the newest one's state. */
  async newestDeliveryState(): Promise<string | null> {
    await this.page.getByRole("button", { name: "Refresh" }).click();
    return this.page.getByTestId(T.deliveryState).first().textContent();
  }

  async redeliverNewest(): Promise<void> {
    await this.page.getByRole("button", { name: /^Redeliver msg_/ }).click();
  }

  async rotate(url: string): Promise<void> {
    await this.page.getByRole("button", { name: `Rotate secret of ${url}` }).click();
    await this.shell.confirm();
  }
}
