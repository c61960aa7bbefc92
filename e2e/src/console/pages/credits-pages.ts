// Page objects of the credits pages: the header's balance, wallets and a wallet's ledger, credit
// requests (ask, decide) and allocations. Test ids are the console's own (data-testid).
import type { Page } from "playwright-core";

export class CreditsPages {
  readonly page: Page;
  constructor(page: Page) {
    this.page = page;
  }

  headerBalance() {
    return this.page.getByTestId("header-balance");
  }
  /** The header's amount as shown ("1,000.00"), once it has one. */
  async headerAmount(): Promise<string> {
    await this.headerBalance().waitFor();
    return ((await this.headerBalance().locator(".amount").textContent()) ?? "").trim();
  }

  async openWallets(): Promise<void> {
    await this.page.goto("/credits");
    await this.page.getByRole("heading", { name: "Credits", level: 1 }).waitFor();
  }
  walletRow(walletId: string) {
    return this.page.locator(`[data-testid="wallet-row"][data-wallet-id="${walletId}"]`);
  }

  async openWallet(walletId: string, query = ""): Promise<void> {
    await this.page.goto(`/credits/wallets/${walletId}${query}`);
    await this.page.getByTestId("wallet-balance").waitFor();
  }
  ledgerRows() {
    return this.page.getByTestId("ledger-row");
  }

  async openRequests(query = ""): Promise<void> {
    await this.page.goto(`/credits/requests${query}`);
    await this.page.getByRole("heading", { name: "Credit requests", level: 1 }).waitFor();
  }
  requestRow(requestId: string) {
    return this.page.locator(`[data-testid="request-row"][data-request-id="${requestId}"]`);
  }
  async decide(requestId: string, opts: { approve: string; note?: string }): Promise<void> {
    await this.requestRow(requestId).getByTestId("request-decide").click();
    const panel = this.page.getByTestId("decide-panel");
    await panel.waitFor();
    await panel.getByLabel("Approve (credits)").fill(opts.approve);
    if (opts.note) await panel.getByTestId("decide-note").fill(opts.note);
    await panel.getByTestId("decide-approve").click();
  }

  async openAllocations(): Promise<void> {
    await this.page.goto("/credits/allocations");
    await this.page.getByTestId("allocate-form").waitFor();
  }
  /** `to` is an option's value: `wallet:<id>`, or `open:user:<id>` for a person without a wallet yet. */
  async allocate(to: string, amount: string, reason: string): Promise<void> {
    await this.page.getByTestId("allocate-to").selectOption(to);
    await this.page.getByLabel("Amount (credits)").fill(amount);
    await this.page.getByLabel("Reason").fill(reason);
    await this.page.getByTestId("allocate-submit").click();
  }
  /** The value of the first receiver whose label mentions `text` (an email, a project's name). */
  async targetNamed(text: string): Promise<string> {
    const option = this.page.getByTestId("allocate-to").locator("option", { hasText: text }).first();
    return (await option.getAttribute("value")) as string;
  }
  notice() {
    return this.page.getByTestId("notice");
  }
}
