// Page objects of the credits pages: the header's balance, wallets and a wallet's ledger, credit
// requests (ask, decide) and allocations. Test ids come from the console (@berth/console/test-ids/*).
import { CREDITS_TEST_IDS as T } from "@berth/console/test-ids/credits";
import { SHELL_TEST_IDS } from "@berth/console/test-ids/shell";
import type { Download, Locator, Page } from "playwright-core";
import { Shell } from "./shell.ts";

export class CreditsPages {
  readonly page: Page;
  readonly shell: Shell;
  constructor(page: Page) {
    this.page = page;
    this.shell = new Shell(page);
  }

  headerBalance() {
    return this.page.getByTestId(SHELL_TEST_IDS.headerBalance);
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
  /** Opens the wallets from the navigation's Credits link (which also refreshes the header's balance). */
  async openWalletsFromNav(): Promise<void> {
    await this.shell.link("Credits").click();
  }
  walletRow(walletId: string) {
    return this.page.locator(`[data-testid="${T.walletRow}"][data-wallet-id="${walletId}"]`);
  }
  walletRowBalance(walletId: string) {
    return this.walletRow(walletId).getByTestId(T.walletBalance);
  }

  async openWallet(walletId: string, query = ""): Promise<void> {
    await this.page.goto(`/credits/wallets/${walletId}${query}`);
    await this.walletBalance().waitFor();
  }
  /** Opens a wallet from its row in the wallets list. */
  async openWalletFromList(walletId: string): Promise<void> {
    await this.walletRow(walletId).getByTestId(T.walletLink).click();
    await this.walletBalance().waitFor();
  }
  /** The wallet page's balance. */
  walletBalance() {
    return this.page.getByTestId(T.walletBalance);
  }
  ledgerRows() {
    return this.page.getByTestId(T.ledgerRow);
  }
  ledgerAmount(row: Locator) {
    return row.getByTestId(T.ledgerAmount);
  }
  ledgerBalanceAfter(row: Locator) {
    return row.getByTestId(T.ledgerBalanceAfter);
  }
  async filterLedgerByKind(kind: string): Promise<void> {
    await this.page.getByTestId(T.ledgerKind).selectOption(kind);
  }
  /** `day` as an input of type date takes it (YYYY-MM-DD). */
  async filterLedgerFrom(day: string): Promise<void> {
    await this.page.getByTestId(T.ledgerFrom).fill(day);
  }
  async clearLedgerFilters(): Promise<void> {
    await this.page.getByRole("button", { name: "Clear filters" }).click();
  }
  async exportLedger(): Promise<Download> {
    const [download] = await Promise.all([
      this.page.waitForEvent("download"),
      this.page.getByTestId(T.ledgerExport).click(),
    ]);
    return download;
  }

  async openRequests(query = ""): Promise<void> {
    await this.page.goto(`/credits/requests${query}`);
    await this.page.getByRole("heading", { name: "Credit requests", level: 1 }).waitFor();
  }
  askForm() {
    return this.page.getByTestId(T.askForm);
  }
  /** The ask form's amount as its field holds it (filled in from the link that led here). */
  askAmountValue() {
    return this.page.getByTestId(T.askAmount).inputValue();
  }
  /** The organization and the project the ask is for, as chosen. */
  askOrganization() {
    return this.page.getByTestId(T.askOrganization).inputValue();
  }
  askFor() {
    return this.page.getByTestId(T.askFor).inputValue();
  }
  /** The ask form's amount field (fill it, or focus it to go on by keyboard). */
  askAmount() {
    return this.page.getByLabel("Amount (credits)");
  }
  async submitAsk(): Promise<void> {
    await this.page.getByTestId(T.askSubmit).click();
  }
  askAmountProblem() {
    return this.page.getByTestId(T.askAmountProblem);
  }
  requestRows() {
    return this.page.getByTestId(T.requestRow);
  }
  requestRow(requestId: string) {
    return this.page.locator(`[data-testid="${T.requestRow}"][data-request-id="${requestId}"]`);
  }
  requestStatus(requestId: string) {
    return this.requestRow(requestId).getByTestId(T.requestStatus);
  }
  decidePanel() {
    return this.page.getByTestId(T.decidePanel);
  }
  async openDecision(requestId: string): Promise<void> {
    await this.requestRow(requestId).getByTestId(T.requestDecide).click();
    await this.decidePanel().waitFor();
  }
  async closeDecision(): Promise<void> {
    await this.decidePanel().getByRole("button", { name: "Close" }).click();
  }
  async decide(requestId: string, opts: { approve: string; note?: string }): Promise<void> {
    await this.openDecision(requestId);
    const panel = this.decidePanel();
    await panel.getByLabel("Approve (credits)").fill(opts.approve);
    if (opts.note) await panel.getByTestId(T.decideNote).fill(opts.note);
    await panel.getByTestId(T.decideApprove).click();
  }

  async openAllocations(): Promise<void> {
    await this.page.goto("/credits/allocations");
    await this.page.getByTestId(T.allocateForm).waitFor();
  }
  /** `to` is an option's value: `wallet:<id>`, or `open:user:<id>` for a person without a wallet yet. */
  async allocate(to: string, amount: string, reason: string): Promise<void> {
    await this.page.getByTestId(T.allocateTo).selectOption(to);
    await this.page.getByLabel("Amount (credits)").fill(amount);
    await this.page.getByLabel("Reason").fill(reason);
    await this.page.getByTestId(T.allocateSubmit).click();
  }
  /** The value of the first receiver whose label mentions `text` (an email, a project's name). */
  async targetNamed(text: string): Promise<string> {
    const option = this.page.getByTestId(T.allocateTo).locator("option", { hasText: text }).first();
    return (await option.getAttribute("value")) as string;
  }
  /** The allocation whose row mentions `text` (its reason). */
  movementRow(text: string) {
    return this.page.getByTestId(T.movementRow).filter({ hasText: text });
  }
  movementAmount(row: Locator) {
    return row.getByTestId(T.movementAmount);
  }
  notice() {
    return this.page.getByTestId(SHELL_TEST_IDS.notice);
  }
}
