// Asking for credits: for the person's own wallet in one of their organizations, or a project's wallet
// (any of the organization's for its admins, else the projects they belong to), with a reason.
import { css, html, LitElement, nothing } from "lit";
import { newIdempotencyKey } from "../../api/client.ts";
import { auth } from "../../app/context.ts";
import { requestCredits } from "../../app/credits.ts";
import "../../components/error-panel/index.ts";
import { creditsText, type Directory, EMPTY_DIRECTORY, parseCredits } from "../../data/credits.ts";
import { IntentKey } from "../../data/intent-key.ts";
import { credits } from "../../styles/credits.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { CREDITS_TEST_IDS } from "../../test-ids/credits.ts";
import { CREDIT_NOTICE, CREDIT_REQUEST_SENT, fire } from "./events.ts";

export class BerthCreditAsk extends LitElement {
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
    directory: { attribute: false },
    query: { attribute: false },
    askOrg: { state: true },
    askProject: { state: true },
    askAmount: { state: true },
    askProblem: { state: true },
    askBusy: { state: true },
    askError: { state: true },
  };
  declare directory: Directory;
  declare query: URLSearchParams;
  declare askOrg: string;
  declare askProject: string;
  declare askAmount: string;
  declare askProblem: string | undefined;
  declare askBusy: boolean;
  declare askError: unknown;
  #askKey = new IntentKey(newIdempotencyKey);

  constructor() {
    super();
    this.directory = EMPTY_DIRECTORY;
    this.query = new URLSearchParams();
    this.askOrg = "";
    this.askProject = "";
    this.askAmount = "";
    this.askProblem = undefined;
    this.askBusy = false;
    this.askError = undefined;
  }

  /** A link such as the wizard's "Ask for credits" may suggest an amount (?amount=4): prefilled, still editable. */
  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    const suggested = this.query.get("amount");
    if (changed.has("query") && suggested && !this.askAmount) this.askAmount = suggested;
  }

  /** Organizations the person belongs to (asking needs a membership), the URL's ?org= first. */
  #myOrganizations(): string[] {
    return [...new Set((auth.me?.memberships ?? []).map((m) => m.organization_id))];
  }

  #org(): string {
    const orgs = this.#myOrganizations();
    const wanted = this.askOrg || this.query.get("org") || "";
    return orgs.includes(wanted) ? wanted : (orgs[0] ?? "");
  }

  #projectsOf(org: string, d: Directory): { id: string; name: string }[] {
    const ms = auth.me?.memberships ?? [];
    const orgAdmin = ms.some((m) => m.organization_id === org && m.role === "org_admin" && m.project_id === null);
    const mine = new Set(ms.flatMap((m) => (m.organization_id === org && m.project_id ? [m.project_id] : [])));
    // An org admin may ask for any project's wallet of the organization; others for their projects'.
    const ids = orgAdmin ? [...d.projectOrganizations].flatMap(([id, o]) => (o === org ? [id] : [])) : [...mine];
    return ids.map((id) => ({ id, name: d.projects.get(id) ?? id })).sort((a, b) => a.name.localeCompare(b.name));
  }

  async #ask(e: SubmitEvent): Promise<void> {
    e.preventDefault();
    const d = this.directory;
    const form = e.target as HTMLFormElement;
    const f = new FormData(form);
    const parsed = parseCredits(this.askAmount);
    this.askProblem = parsed.ok ? undefined : parsed.problem;
    if (!parsed.ok) {
      this.renderRoot.querySelector<HTMLInputElement>("#ask-amount")?.focus();
      return;
    }
    const org = this.#org();
    const project = String(f.get("project") ?? "");
    const body = {
      organization_id: org,
      ...(project ? { project_id: project } : {}),
      amount: parsed.units,
      reason: String(f.get("reason") ?? "").trim(),
    };
    this.askBusy = true;
    this.askError = undefined;
    fire(this, CREDIT_NOTICE, { text: undefined });
    try {
      await requestCredits(body, this.#askKey.key);
      this.#askKey.settle();
      const where = project ? `${d.projects.get(project) ?? project}'s wallet` : "your wallet";
      fire(this, CREDIT_NOTICE, {
        text: `Your request for ${creditsText(parsed.units)} for ${where} was sent. An administrator of ${d.organizations.get(org) ?? org} decides; the decision shows below.`,
      });
      this.askAmount = "";
      form.reset();
      fire(this, CREDIT_REQUEST_SENT);
    } catch (err) {
      this.#askKey.settle(err);
      this.askError = err;
    } finally {
      this.askBusy = false;
    }
  }

  override render() {
    const d = this.directory;
    const orgs = this.#myOrganizations();
    if (orgs.length === 0)
      return html`<section class="card" aria-labelledby="ask-h"><h2 id="ask-h">Ask for credits</h2>
        <p class="muted">Requests are made by members of an organization, for their own wallet or a project's. You belong to none.</p></section>`;
    const org = this.#org();
    const projects = this.#projectsOf(org, d);
    const wantedProject = this.askProject || this.query.get("project") || "";
    return html`<section class="card" aria-labelledby="ask-h">
      <h2 id="ask-h">Ask for credits</h2>
      <form @submit=${(e: SubmitEvent) => this.#ask(e)} data-testid=${CREDITS_TEST_IDS.askForm} novalidate>
        <div class="form-grid">
          <div class="field"><label for="ask-org">Organization</label>
            <select id="ask-org" name="organization" data-testid=${CREDITS_TEST_IDS.askOrganization} @change=${(
              e: Event,
            ) => {
              this.askOrg = (e.target as HTMLSelectElement).value;
              this.askProject = "";
            }}>
              ${orgs.map((id) => html`<option value=${id} ?selected=${id === org}>${d.organizations.get(id) ?? id}</option>`)}
            </select></div>
          <div class="field"><label for="ask-for">For</label>
            <select id="ask-for" name="project" data-testid=${CREDITS_TEST_IDS.askFor} @change=${(e: Event) => (this.askProject = (e.target as HTMLSelectElement).value)}>
              <option value="" ?selected=${!wantedProject}>My own wallet</option>
              ${projects.map((p) => html`<option value=${p.id} ?selected=${p.id === wantedProject}>${p.name} (project wallet)</option>`)}
            </select></div>
          <div class="field"><label for="ask-amount">Amount (credits)</label>
            <input id="ask-amount" name="amount" inputmode="decimal" autocomplete="off" required data-testid=${CREDITS_TEST_IDS.askAmount}
              aria-describedby="ask-amount-hint${this.askProblem ? " ask-amount-problem" : ""}" aria-invalid=${this.askProblem ? "true" : "false"}
              .value=${this.askAmount} @input=${(e: Event) => {
                this.askAmount = (e.target as HTMLInputElement).value;
                this.askProblem = undefined;
              }} />
            <p class="hint" id="ask-amount-hint">Such as 100 or 12.5.</p>
            ${this.askProblem ? html`<p class="problem" id="ask-amount-problem" data-testid=${CREDITS_TEST_IDS.askAmountProblem}>${this.askProblem}</p>` : nothing}
          </div>
          <div class="field wide"><label for="ask-reason">Reason</label>
            <textarea id="ask-reason" name="reason" required maxlength="1000" data-testid=${CREDITS_TEST_IDS.askReason} aria-describedby="ask-reason-hint"></textarea>
            <p class="hint" id="ask-reason-hint">What the credits are for; the administrator who decides reads it.</p></div>
        </div>
        ${this.askError ? html`<berth-error-panel heading="The request was not sent" .error=${this.askError}></berth-error-panel>` : nothing}
        <button class="primary" type="submit" ?disabled=${this.askBusy} data-testid=${CREDITS_TEST_IDS.askSubmit}>${this.askBusy ? "Sending…" : "Send request"}</button>
      </form>
    </section>`;
  }
}
