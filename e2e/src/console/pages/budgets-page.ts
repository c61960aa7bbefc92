// Page object of Budgets and refills (console/src/views/budgets-view/): an organization's budget per
// period and the refills of its wallets.
import { BUDGETS_TEST_IDS as T } from "@berth/console/test-ids/budgets";
import { CREDITS_TEST_IDS } from "@berth/console/test-ids/credits";
import type { Page } from "playwright-core";
import { Shell } from "./shell.ts";

export class BudgetsPage {
  readonly page: Page;
  readonly shell: Shell;
  constructor(page: Page) {
    this.page = page;
    this.shell = new Shell(page);
  }

  /** From the credits pages' tab. */
  async openFromCredits(): Promise<void> {
    await this.page.goto("/credits");
    await this.tab("budgets").click();
    await this.page.getByRole("heading", { name: "Budgets and refills", level: 1 }).waitFor();
  }

  async open(): Promise<void> {
    await this.page.goto("/credits/budgets");
  }

  /** A tab of the credits pages' navigation. */
  tab(name: "wallets" | "requests" | "allocations" | "budgets") {
    return this.page.getByTestId(CREDITS_TEST_IDS.tab(name));
  }

  noBudgets() {
    return this.page.getByTestId(T.noBudgets);
  }
  noRefills() {
    return this.page.getByTestId(T.noRefills);
  }
  budgetForm() {
    return this.page.getByTestId(T.budgetForm);
  }
  refillForm() {
    return this.page.getByTestId(T.refillForm);
  }
  notice() {
    return this.page.getByTestId(T.budgetsNotice);
  }

  /** Fills the budget form (a period: its select; else the one shown) and saves. */
  async setBudget(amount: string, period?: string): Promise<void> {
    if (period) await this.page.getByLabel("Period", { exact: true }).selectOption(period);
    await this.page.getByLabel("Budget (credits per period)").fill(amount);
    await this.page.getByTestId(T.budgetSave).click();
  }
  budgetProblem() {
    return this.page.getByTestId(T.budgetProblem);
  }
  budgetRow(organizationId: string) {
    return this.page.locator(`[data-testid="${T.budgetRow}"][data-organization="${organizationId}"]`);
  }
  budgetLeft(organizationId: string) {
    return this.budgetRow(organizationId).getByTestId(T.budgetLeft);
  }
  async removeBudget(): Promise<void> {
    await this.page.getByTestId(T.removeBudget).click();
    await this.page.getByRole("button", { name: "Remove budget" }).click();
  }

  async addRefill(r: { wallet: string; rule: string; amount: string; every: string }): Promise<void> {
    await this.page.getByLabel("Wallet to refill").selectOption(r.wallet);
    await this.page.getByLabel("Rule", { exact: true }).selectOption(r.rule);
    await this.page.getByLabel("Amount (credits)").fill(r.amount);
    await this.page.getByLabel("Every", { exact: true }).selectOption(r.every);
    await this.page.getByTestId(T.refillSave).click();
  }
  refillRow() {
    return this.page.getByTestId(T.refillRow);
  }
  refillState() {
    return this.refillRow().getByTestId(T.refillState);
  }
  async toggleRefill(): Promise<void> {
    await this.refillRow().getByTestId(T.refillToggle).click();
  }
}
