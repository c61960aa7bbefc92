// Deciding a credit request: approve all or part of it, paid from the organization's wallet or another
// the person manages, or deny it; a note goes to the requester either way.
import { Task } from "@lit/task";
import { css, html, LitElement, nothing } from "lit";
import { newIdempotencyKey } from "../../api/client.ts";
import type { CreditRequest } from "../../api/openapi.gen.ts";
import { auth } from "../../app/context.ts";
import { approveCreditRequest, denyCreditRequest, loadOrganizationWallets, meForCredits } from "../../app/credits.ts";
import "../../components/error-panel/index.ts";
import {
  canManageWallet,
  creditsText,
  type Directory,
  EMPTY_DIRECTORY,
  formatCredits,
  parseCredits,
  unitsToInput,
  walletLine,
} from "../../data/credits.ts";
import { IntentKey } from "../../data/intent-key.ts";
import { credits } from "../../styles/credits.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { CREDITS_TEST_IDS } from "../../test-ids/credits.ts";
import { CREDIT_DECIDE_CLOSE, CREDIT_NOTICE, CREDIT_REQUEST_DECIDED, fire, requesterName } from "./events.ts";

export class BerthCreditDecide extends LitElement {
  static override styles = [
    tokens,
    shared,
    page,
    credits,
    css`
    :host {
      display: block;
    }
  `,
  ];
  static override properties = {
    request: { attribute: false },
    directory: { attribute: false },
    decideAmount: { state: true },
    decideProblem: { state: true },
    decideBusy: { state: true },
    decideError: { state: true },
  };
  declare request: CreditRequest | undefined;
  declare directory: Directory;
  declare decideAmount: string;
  declare decideProblem: string | undefined;
  declare decideBusy: boolean;
  declare decideError: unknown;
  #decideKey = new IntentKey(newIdempotencyKey);

  /** Wallets that may pay for the request: those of its organization the person manages. */
  #payers = new Task(this, {
    task: async ([org], { signal }) => (org ? loadOrganizationWallets(org as string, signal) : undefined),
    args: () => [this.request?.organization_id ?? ""],
  });

  constructor() {
    super();
    this.request = undefined;
    this.directory = EMPTY_DIRECTORY;
    this.decideAmount = "";
    this.decideProblem = undefined;
    this.decideBusy = false;
    this.decideError = undefined;
  }

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has("request") && this.request) {
      this.decideAmount = unitsToInput(this.request.amount);
      this.decideProblem = undefined;
      this.decideError = undefined;
    }
  }

  override updated(changed: Map<PropertyKey, unknown>): void {
    if (changed.has("request") && this.request) this.renderRoot.querySelector<HTMLElement>("#decide-h")?.focus();
  }

  async #decide(verdict: "approve" | "deny", form: HTMLFormElement): Promise<void> {
    const r = this.request;
    if (!r) return;
    const f = new FormData(form);
    const note = String(f.get("note") ?? "").trim();
    const from = String(f.get("from") ?? "");
    const who = requesterName(r, this.directory, auth.userId);
    let body: { amount?: string; from_wallet_id?: string; note?: string } = note ? { note } : {};
    if (verdict === "approve") {
      const parsed = parseCredits(this.decideAmount);
      const problem = !parsed.ok
        ? parsed.problem
        : BigInt(parsed.units) > BigInt(r.amount)
          ? `At most the ${formatCredits(r.amount)} credits asked for.`
          : undefined;
      this.decideProblem = problem;
      if (!parsed.ok || problem) {
        this.renderRoot.querySelector<HTMLInputElement>("#decide-amount")?.focus();
        return;
      }
      body = {
        ...body,
        ...(parsed.units !== r.amount ? { amount: parsed.units } : {}),
        ...(from ? { from_wallet_id: from } : {}),
      };
    }
    this.decideBusy = true;
    this.decideError = undefined;
    try {
      const done =
        verdict === "approve"
          ? await approveCreditRequest(r.id, body, this.#decideKey.key)
          : await denyCreditRequest(r.id, note ? { note } : {}, this.#decideKey.key);
      this.#decideKey.settle();
      fire(this, CREDIT_NOTICE, {
        text:
          done.status === "denied"
            ? `Denied the request of ${who} for ${creditsText(r.amount)}.`
            : done.status === "partially_approved"
              ? `Partly approved: ${formatCredits(done.approved_amount)} of the ${creditsText(r.amount)} ${who} asked for.`
              : `Approved: ${creditsText(done.approved_amount ?? r.amount)} for ${who}.`,
      });
      fire(this, CREDIT_REQUEST_DECIDED);
    } catch (err) {
      this.#decideKey.settle(err);
      this.decideError = err;
    } finally {
      this.decideBusy = false;
    }
  }

  override render() {
    const r = this.request;
    if (!r) return nothing;
    const d = this.directory;
    const who = requesterName(r, d, auth.userId);
    const payers = (this.#payers.value?.data ?? []).filter(
      (w) => w.id !== r.wallet_id && w.owner.kind !== "organization" && canManageWallet(w, meForCredits()),
    );
    return html`<section class="card" aria-labelledby="decide-h" data-testid=${CREDITS_TEST_IDS.decidePanel}>
      <h2 id="decide-h" tabindex="-1">Decide: ${who} asks for ${creditsText(r.amount)}</h2>
      <p><strong>Reason:</strong> ${r.reason}</p>
      <form novalidate @submit=${(e: SubmitEvent) => {
        e.preventDefault();
        void this.#decide("approve", e.target as HTMLFormElement);
      }}>
        <div class="form-grid">
          <div class="field"><label for="decide-amount">Approve (credits)</label>
            <input id="decide-amount" name="amount" inputmode="decimal" autocomplete="off" data-testid=${CREDITS_TEST_IDS.decideAmount}
              aria-describedby="decide-amount-hint${this.decideProblem ? " decide-amount-problem" : ""}" aria-invalid=${this.decideProblem ? "true" : "false"}
              .value=${this.decideAmount} @input=${(e: Event) => {
                this.decideAmount = (e.target as HTMLInputElement).value;
                this.decideProblem = undefined;
              }} />
            <p class="hint" id="decide-amount-hint">All ${formatCredits(r.amount)} asked for, or less to approve part of it.</p>
            ${this.decideProblem ? html`<p class="problem" id="decide-amount-problem">${this.decideProblem}</p>` : nothing}
          </div>
          <div class="field wide"><label for="decide-from">Paid from</label>
            <select id="decide-from" name="from" data-testid=${CREDITS_TEST_IDS.decideFrom}>
              <option value="">The organization's wallet (${d.organizations.get(r.organization_id) ?? r.organization_id})</option>
              ${payers.map((w) => html`<option value=${w.id}>${walletLine(w, d)} · ${formatCredits(w.spendable)} available</option>`)}
            </select></div>
          <div class="field wide"><label for="decide-note">Note to ${who} (optional)</label>
            <input id="decide-note" name="note" maxlength="1000" data-testid=${CREDITS_TEST_IDS.decideNote} /></div>
        </div>
        ${this.decideError ? html`<berth-error-panel heading="The decision was not recorded" .error=${this.decideError}></berth-error-panel>` : nothing}
        <div class="actions">
          <button class="primary" type="submit" ?disabled=${this.decideBusy} data-testid=${CREDITS_TEST_IDS.decideApprove}>Approve</button>
          <button class="danger" type="button" ?disabled=${this.decideBusy} data-testid=${CREDITS_TEST_IDS.decideDeny} @click=${(
            e: Event,
          ) => {
            const form = (e.target as HTMLElement).closest("form");
            if (form) void this.#decide("deny", form);
          }}>Deny</button>
          <button type="button" @click=${() => fire(this, CREDIT_DECIDE_CLOSE)}>Close</button>
        </div>
      </form>
    </section>`;
  }
}
