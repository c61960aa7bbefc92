// Page object of the idle and time limits page (console/src/views/admin-idle-limits-view/): a card per
// resource policy, editable by super_admins only.
import { IDLE_LIMITS_TEST_IDS as T } from "@berth/console/test-ids/idle-limits";
import { SHELL_TEST_IDS } from "@berth/console/test-ids/shell";
import type { Page } from "playwright-core";
import { Shell } from "./shell.ts";

export class IdleLimitsPage {
  readonly page: Page;
  readonly shell: Shell;
  constructor(page: Page) {
    this.page = page;
    this.shell = new Shell(page);
  }

  async openFromMenu(): Promise<void> {
    await this.shell.adminMenu().click();
    await this.page.getByRole("link", { name: "Idle & time limits" }).click();
    await this.page.getByTestId(T.policy("global")).waitFor();
  }

  /** A policy's field: timeout_minutes, min_timeout_minutes, max_timeout_minutes, max_session_hours, … */
  field(policy: string, name: string) {
    return this.page.getByTestId(T.field(policy, name));
  }

  /** Fills the given fields of a policy and saves it. */
  async save(policy: string, values: Record<string, string>): Promise<void> {
    for (const [name, value] of Object.entries(values)) await this.field(policy, name).fill(value);
    await this.saveButton(policy).click();
  }

  saveButton(policy: string) {
    return this.page.getByTestId(T.save(policy));
  }

  readOnly() {
    return this.page.getByTestId(T.readOnly);
  }

  notice() {
    return this.page.getByTestId(SHELL_TEST_IDS.notice);
  }
}
