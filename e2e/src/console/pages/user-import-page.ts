// Page object of the bulk import on the Users page (console/src/views/admin-users-view/berth-user-import.ts).
import { USER_IMPORT_TEST_IDS as T } from "@berth/console/test-ids/user-import";
import type { Download, Page } from "playwright-core";
import { Shell } from "./shell.ts";

export class UserImportPage {
  readonly page: Page;
  readonly shell: Shell;
  constructor(page: Page) {
    this.page = page;
    this.shell = new Shell(page);
  }

  async openFromMenu(): Promise<void> {
    await this.shell.openAdmin("Users");
    await this.page.getByTestId(T.open).click();
    await this.page.getByRole("heading", { name: "Import users from CSV" }).waitFor();
  }

  async choose(name: string, csv: string): Promise<void> {
    await this.page.getByTestId(T.file).setInputFiles({ name, mimeType: "text/csv", buffer: Buffer.from(csv) });
  }

  async dryRun(): Promise<void> {
    await this.page.getByTestId(T.dryRun).click();
    await this.page.getByText("Dry run — nothing was written.").waitFor();
  }

  async importRows(): Promise<void> {
    await this.page.getByTestId(T.run).click();
    await this.page.getByText(/^\s*Imported\./).waitFor();
  }

  counts() {
    return this.page.getByTestId(T.counts);
  }

  /** Each row's outcome and code, as the table shows them. */
  async outcomes(): Promise<{ outcome: string; code: string }[]> {
    return this.page
      .getByTestId(T.row)
      .evaluateAll((rows) =>
        rows.map((r) => ({ outcome: r.getAttribute("data-outcome") ?? "", code: r.getAttribute("data-code") ?? "" })),
      );
  }

  /** Asks for the temporary passwords, which Berth gives once. */
  async revealPasswords(): Promise<void> {
    await this.page.getByTestId(T.reveal).click();
    await this.page.getByTestId(T.passwords).waitFor();
  }

  revealButton() {
    return this.page.getByTestId(T.reveal);
  }

  /** The temporary passwords shown once (after revealPasswords), by email. */
  async passwords(): Promise<Map<string, string>> {
    const cells = await this.page
      .getByTestId(T.passwords)
      .locator("tbody tr")
      .evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent?.trim() ?? "")));
    return new Map(cells.map(([email = "", password = ""]) => [email, password]));
  }

  async downloadResults(): Promise<Download> {
    const [download] = await Promise.all([
      this.page.waitForEvent("download"),
      this.page.getByTestId(T.download).click(),
    ]);
    return download;
  }
}
