// Page object of the notification settings page (console/src/views/notification-settings-view/), reached
// from the bell: a switch per kind, critical kinds always on with the reason.
import { NOTIFICATION_SETTINGS_TEST_IDS as T } from "@berth/console/test-ids/notification-settings";
import { SHELL_TEST_IDS } from "@berth/console/test-ids/shell";
import type { Page } from "playwright-core";
import { Shell } from "./shell.ts";

export class NotificationSettingsPage {
  readonly page: Page;
  readonly shell: Shell;
  constructor(page: Page) {
    this.page = page;
    this.shell = new Shell(page);
  }

  async openFromBell(): Promise<void> {
    await this.page.getByTestId(SHELL_TEST_IDS.bell).click();
    await this.page.getByTestId(SHELL_TEST_IDS.settingsLink).click();
    await this.page.getByRole("heading", { name: "Notification settings", level: 1 }).waitFor();
    await this.loaded();
  }

  async open(baseUrl: string): Promise<void> {
    await this.page.goto(`${baseUrl}/settings/notifications`);
    await this.loaded();
  }

  async loaded(): Promise<void> {
    await this.page.getByTestId(T.preferences).waitFor();
  }

  /** The kinds listed, in order. */
  kinds(): Promise<(string | null)[]> {
    return this.page.getByTestId(T.preference).evaluateAll((rows) => rows.map((r) => r.getAttribute("data-kind")));
  }

  row(kind: string) {
    return this.page.locator(`[data-testid="${T.preference}"][data-kind="${kind}"]`);
  }

  toggle(kind: string) {
    return this.row(kind).getByRole("switch");
  }

  firstSwitch() {
    return this.page.getByTestId(T.preferenceSwitch).first();
  }

  alwaysOn(kind: string) {
    return this.row(kind).getByTestId(T.alwaysOn);
  }

  saved() {
    return this.page.getByTestId(T.preferencesSaved);
  }
}
