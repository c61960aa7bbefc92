// Budgets and refills (docs/dev/billing.md, "Refills and budgets"): an organization's administrators cap
// what its sessions are charged per period, and have wallets topped up to, or by, an amount every period
// from a wallet they manage. The door and the running-out watch enforce budgets; the worker applies
// refills once per period. The API decides who may; the forms offer what the person administers.
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import { newIdempotencyKey } from "../../api/client.ts";
import type { Budget, Refill, Wallet } from "../../api/openapi.gen.ts";
import { auth } from "../../app/context.ts";
import { meForCredits } from "../../app/credits.ts";
import { loadDirectory } from "../../app/directory.ts";
import { confirmAction } from "../../components/confirm-dialog/index.ts";
import { creditsNav } from "../../components/credits-nav.ts";
import "../../components/empty-state/index.ts";
import "../../components/error-panel/index.ts";
import {
  createRefill,
  deleteBudget,
  loadBudgets,
  loadRefills,
  loadWallets,
  setBudget,
  setRefillEnabled,
} from "../../app/credits.ts";
import { renderTask } from "../../components/task-states.ts";
import {
  canManageWallet,
  creditsText,
  type Directory,
  EMPTY_DIRECTORY,
  formatCredits,
  managesCredits,
  parseCredits,
  walletLine,
} from "../../data/credits.ts";
import { formatTime } from "../../data/format.ts";
import { IntentKey } from "../../data/intent-key.ts";
import { credits } from "../../styles/credits.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { BUDGETS_TEST_IDS } from "../../test-ids/budgets.ts";

type Period = Budget["period"];
const PERIOD_LABEL: Record<Period, string> = { daily: "Daily", weekly: "Weekly (from Monday)", monthly: "Monthly" };
const MODE_LABEL: Record<Refill["mode"], string> = { top_up_to: "Top up to", add: "Add" };

export class BerthBudgetsView extends LitElement {
  static override styles = [tokens, shared, page, credits];
  static override properties = {
    error: { state: true },
    notice: { state: true },
    problem: { state: true },
    busy: { state: true },
  };
  declare error: unknown;
  declare notice: string | undefined;
  declare problem: { form: "budget" | "refill"; text: string } | undefined;
  declare busy: boolean;
  readonly #refillIntent = new IntentKey(newIdempotencyKey);

  #budgets = new Task(this, {
    task: async (_a, { signal }) => loadBudgets(signal),
    args: () => [],
  });
  #refills = new Task(this, {
    task: async (_a, { signal }) => loadRefills(signal),
    args: () => [],
  });
  #wallets = new Task(this, {
    task: async (_a, { signal }) => (await loadWallets({ size: 100 }, signal)).data,
    args: () => [],
  });
  #directory = new Task(this, {
    task: async (_a, { signal }) => loadDirectory({ signal }),
    args: () => [],
  });

  constructor() {
    super();
    this.error = undefined;
    this.notice = undefined;
    this.problem = undefined;
    this.busy = false;
  }

  get #dir(): Directory {
    return this.#directory.value ?? EMPTY_DIRECTORY;
  }

  /** Organizations whose budget the person may set: those they administer (all theirs for super_admins). */
  get #adminOrgs(): string[] {
    const mine = (auth.me?.memberships ?? [])
      .filter((m) => m.role === "org_admin" && m.project_id === null)
      .map((m) => m.organization_id);
    return auth.isSuperAdmin ? [...new Set([...this.#dir.organizations.keys(), ...mine])] : mine;
  }

  async #do(notice: string, fn: () => Promise<unknown>, ...reload: Task<readonly unknown[], unknown>[]) {
    this.error = undefined;
    this.notice = undefined;
    this.busy = true;
    try {
      await fn();
      this.notice = notice;
      for (const t of reload) void t.run();
      return true;
    } catch (e) {
      this.error = e;
      return false;
    } finally {
      this.busy = false;
    }
  }

  async #setBudget(e: SubmitEvent): Promise<void> {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const f = new FormData(form);
    const amount = parseCredits(String(f.get("amount") ?? ""));
    this.problem = amount.ok ? undefined : { form: "budget", text: amount.problem };
    if (!amount.ok) return;
    const org = String(f.get("organization") ?? "");
    const period = String(f.get("period")) as Period;
    const ok = await this.#do(
      `${this.#dir.organizations.get(org) ?? org} may be charged at most ${creditsText(amount.units)} ${period === "daily" ? "a day" : period === "weekly" ? "a week" : "a month"}.`,
      () => setBudget(org, { period, amount: amount.units }),
      this.#budgets,
    );
    if (ok) form.reset();
  }

  async #removeBudget(b: Budget): Promise<void> {
    const name = this.#dir.organizations.get(b.organization_id) ?? b.organization_id;
    if (
      !(await confirmAction({
        heading: `Remove ${name}'s budget?`,
        body: "Its sessions are then limited only by their wallets.",
        confirmLabel: "Remove budget",
        danger: true,
      }))
    )
      return;
    await this.#do(`${name} has no budget now.`, () => deleteBudget(b.organization_id), this.#budgets);
  }

  async #addRefill(e: SubmitEvent): Promise<void> {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const f = new FormData(form);
    const amount = parseCredits(String(f.get("amount") ?? ""));
    this.problem = amount.ok ? undefined : { form: "refill", text: amount.problem };
    if (!amount.ok) return;
    const source = String(f.get("source") ?? "");
    const body = {
      wallet_id: String(f.get("wallet") ?? ""),
      mode: String(f.get("mode")) as Refill["mode"],
      amount: amount.units,
      period: String(f.get("period")) as Period,
      ...(source ? { source_wallet_id: source } : {}),
    };
    const ok = await this.#do(
      "Refill added: the worker applies it once per period, starting with this one.",
      async () => {
        try {
          await createRefill(body, this.#refillIntent.key);
          this.#refillIntent.settle();
        } catch (err) {
          this.#refillIntent.settle(err);
          throw err;
        }
      },
      this.#refills,
      this.#wallets,
    );
    if (ok) form.reset();
  }

  async #toggle(r: Refill): Promise<void> {
    await this.#do(
      r.enabled ? "Refill paused: no period is applied until it is resumed." : "Refill resumed.",
      () => setRefillEnabled(r.id, !r.enabled),
      this.#refills,
    );
  }

  #walletName(id: string, wallets: readonly Wallet[]): string {
    const w = wallets.find((x) => x.id === id);
    return w ? walletLine(w, this.#dir) : id;
  }

  #budgetsSection() {
    const orgs = this.#adminOrgs;
    return html`<section class="card" aria-labelledby="h-budgets">
      <h2 id="h-budgets">Budgets</h2>
      <p class="muted">A budget caps what an organization's sessions are charged per period, whichever wallet pays. A session that would pass it is not started, and running ones are paused when it is spent.</p>
      ${renderTask(this.#budgets, {
        pendingLabel: "Loading budgets…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<p class="muted" data-testid=${BUDGETS_TEST_IDS.noBudgets}>No organization you administer has a budget.</p>`,
        complete: (r) => html`<div class="table-wrap"><table data-testid=${BUDGETS_TEST_IDS.budgets}>
          <caption class="visually-hidden">Budgets</caption>
          <thead><tr><th scope="col">Organization</th><th scope="col">Period</th><th scope="col" class="num">Budget</th><th scope="col" class="num">Spent</th><th scope="col" class="num">Left</th><th scope="col">Resets</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>${r.data.map(
            (b) => html`<tr data-testid=${BUDGETS_TEST_IDS.budgetRow} data-organization=${b.organization_id}>
              <td>${this.#dir.organizations.get(b.organization_id) ?? b.organization_id}</td>
              <td>${PERIOD_LABEL[b.period]}</td>
              <td class="num">${formatCredits(BigInt(b.amount))}</td>
              <td class="num">${formatCredits(BigInt(b.spent))}</td>
              <td class="num" data-testid=${BUDGETS_TEST_IDS.budgetLeft}>${formatCredits(BigInt(b.remaining))}</td>
              <td><time datetime=${b.resets_at}>${formatTime(b.resets_at)}</time></td>
              <td><button type="button" @click=${() => this.#removeBudget(b)} aria-label="Remove the budget of ${this.#dir.organizations.get(b.organization_id) ?? b.organization_id}" data-testid=${BUDGETS_TEST_IDS.removeBudget}>Remove</button></td>
            </tr>`,
          )}</tbody></table></div>`,
      })}
      ${
        orgs.length > 0
          ? html`<form @submit=${(e: SubmitEvent) => this.#setBudget(e)} data-testid=${BUDGETS_TEST_IDS.budgetForm}>
          <h3>Set a budget</h3>
          <div class="form-grid">
            <div class="field"><label for="b-org">Organization</label><select id="b-org" name="organization">${orgs.map((o) => html`<option value=${o}>${this.#dir.organizations.get(o) ?? o}</option>`)}</select></div>
            <div class="field"><label for="b-period">Period</label><select id="b-period" name="period">${(["monthly", "weekly", "daily"] as const).map((p) => html`<option value=${p}>${PERIOD_LABEL[p]}</option>`)}</select></div>
            <div class="field"><label for="b-amount">Budget (credits per period)</label><input id="b-amount" name="amount" inputmode="decimal" autocomplete="off" required aria-describedby="b-amount-hint" />
              <p class="hint" id="b-amount-hint">Replaces the organization's budget if it has one.</p></div>
          </div>
          ${this.problem?.form === "budget" ? html`<p class="problem" role="alert" data-testid=${BUDGETS_TEST_IDS.budgetProblem}>${this.problem.text}</p>` : nothing}
          <button class="primary" type="submit" ?disabled=${this.busy} data-testid=${BUDGETS_TEST_IDS.budgetSave}>Set budget</button>
        </form>`
          : nothing
      }
    </section>`;
  }

  #refillsSection() {
    const wallets = this.#wallets.value ?? [];
    const me = meForCredits();
    const managed = wallets.filter((w) => w.owner.kind !== "system" && canManageWallet(w, me));
    return html`<section class="card" aria-labelledby="h-refills">
      <h2 id="h-refills">Refills</h2>
      <p class="muted">A refill tops a wallet up to an amount, or adds an amount, every period (UTC days, weeks from Monday, months from the 1st), paid by a wallet you manage. A source short of credits pays what it has.</p>
      ${renderTask(this.#refills, {
        pendingLabel: "Loading refills…",
        isEmpty: (r) => r.data.length === 0,
        empty: () => html`<p class="muted" data-testid=${BUDGETS_TEST_IDS.noRefills}>No refill yet.</p>`,
        complete: (r) => html`<div class="table-wrap"><table data-testid=${BUDGETS_TEST_IDS.refills}>
          <caption class="visually-hidden">Refills</caption>
          <thead><tr><th scope="col">Wallet</th><th scope="col">Rule</th><th scope="col">Period</th><th scope="col">Paid by</th><th scope="col">State</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>${r.data.map(
            (x) => html`<tr data-testid=${BUDGETS_TEST_IDS.refillRow} data-refill-id=${x.id}>
              <td>${this.#walletName(x.wallet_id, wallets)}</td>
              <td>${MODE_LABEL[x.mode]} ${creditsText(x.amount)}</td>
              <td>${PERIOD_LABEL[x.period]}</td>
              <td>${this.#walletName(x.source_wallet_id, wallets)}</td>
              <td><span class="badge ${x.enabled ? "tone-ok" : "tone-muted"}" data-testid=${BUDGETS_TEST_IDS.refillState}>${x.enabled ? "active" : "paused"}</span></td>
              <td><button type="button" @click=${() => this.#toggle(x)} data-testid=${BUDGETS_TEST_IDS.refillToggle}>${x.enabled ? "Pause" : "Resume"}</button></td>
            </tr>`,
          )}</tbody></table></div>`,
      })}
      ${
        managed.length > 0
          ? html`<form @submit=${(e: SubmitEvent) => this.#addRefill(e)} data-testid=${BUDGETS_TEST_IDS.refillForm}>
          <h3>Add a refill</h3>
          <div class="form-grid">
            <div class="field"><label for="r-wallet">Wallet to refill</label><select id="r-wallet" name="wallet">${managed.map((w) => html`<option value=${w.id}>${walletLine(w, this.#dir)}</option>`)}</select></div>
            <div class="field"><label for="r-mode">Rule</label><select id="r-mode" name="mode"><option value="top_up_to">Top up to the amount</option><option value="add">Add the amount</option></select></div>
            <div class="field"><label for="r-amount">Amount (credits)</label><input id="r-amount" name="amount" inputmode="decimal" autocomplete="off" required /></div>
            <div class="field"><label for="r-period">Every</label><select id="r-period" name="period"><option value="monthly">month</option><option value="weekly">week (from Monday)</option><option value="daily">day</option></select></div>
            <div class="field"><label for="r-source">Paid by</label><select id="r-source" name="source"><option value="">The parent wallet (the organization's)</option>${managed.map((w) => html`<option value=${w.id}>${walletLine(w, this.#dir)}</option>`)}</select></div>
          </div>
          ${this.problem?.form === "refill" ? html`<p class="problem" role="alert" data-testid=${BUDGETS_TEST_IDS.refillProblem}>${this.problem.text}</p>` : nothing}
          <button class="primary" type="submit" ?disabled=${this.busy} data-testid=${BUDGETS_TEST_IDS.refillSave}>Add refill</button>
        </form>`
          : nothing
      }
    </section>`;
  }

  override render() {
    return html`<div class="page-head"><h1>Budgets and refills</h1></div>
      ${creditsNav("budgets", managesCredits(meForCredits()))}
      ${this.notice ? html`<p class="success" role="status" data-testid=${BUDGETS_TEST_IDS.budgetsNotice}>${this.notice}</p>` : nothing}
      ${this.error ? html`<berth-error-panel heading="That did not work" .error=${this.error}></berth-error-panel>` : nothing}
      ${this.#budgetsSection()}${this.#refillsSection()}`;
  }
}
