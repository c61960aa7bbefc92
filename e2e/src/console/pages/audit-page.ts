// Page object of the audit log (console/src/views/audit-view/): rows with filters and a CSV download.
import { AUDIT_TEST_IDS as T } from "@berth/console/test-ids/audit";
import type { Download, Page } from "playwright-core";
import { Shell } from "./shell.ts";

export class AuditPage {
  readonly page: Page;
  readonly shell: Shell;
  constructor(page: Page) {
    this.page = page;
    this.shell = new Shell(page);
  }

  async open(): Promise<void> {
    await this.page.goto("/admin/audit");
    await this.page.getByTestId(T.table).waitFor();
  }

  /** The rows' values of one data attribute (action, outcome), in order. */
  column(attribute: "action" | "outcome"): Promise<(string | null)[]> {
    return this.page
      .getByTestId(T.row)
      .evaluateAll((rows, a) => rows.map((r) => r.getAttribute(`data-${a}`)), attribute);
  }

  async filter(f: { outcome?: string; action?: string }): Promise<void> {
    if (f.outcome) await this.page.getByLabel("Outcome").selectOption(f.outcome);
    if (f.action) await this.page.getByLabel("Action (prefix ends in *)").fill(f.action);
    await this.page.getByTestId(T.apply).click();
  }

  async download(): Promise<Download> {
    const [download] = await Promise.all([
      this.page.waitForEvent("download"),
      this.page.getByTestId(T.download).click(),
    ]);
    return download;
  }
}
