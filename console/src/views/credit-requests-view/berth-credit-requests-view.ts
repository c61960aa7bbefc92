// Credit requests: a member asks for credits with a reason (for their own wallet in an organization, or
// a project's they belong to); administrators see the pending requests and approve them, all or part
// (an allocation from a wallet they manage, by default the organization's), or deny them with a note.
// The requester may withdraw a pending request.
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import { newIdempotencyKey } from "../../api/client.ts";
import type { CreditRequest } from "../../api/openapi.gen.ts";
import { auth, router } from "../../app/context.ts";
import { announceCreditsChanged, meForCredits } from "../../app/credits.ts";
import { loadDirectory } from "../../app/directory.ts";
import { creditsNav } from "../../components/credits-nav.ts";
import "../../components/empty-state/index.ts";
import "../../components/error-panel/index.ts";
import "../../components/pager/index.ts";
import {
  approveCreditRequest,
  cancelCreditRequest,
  denyCreditRequest,
  loadCreditRequests,
  loadOrganizationWallets,
  requestCredits,
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
  queryFromRequestsFilter,
  REQUEST_STATUSES,
  type RequestsFilter,
  requestsFilterFromQuery,
  STATUS_LABEL,
  STATUS_TONE,
  unitsToInput,
  walletLine,
} from "../../data/credits.ts";
import { formatRelative, formatTime } from "../../data/format.ts";
import { IntentKey } from "../../data/intent-key.ts";
import { credits } from "../../styles/credits.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";

const PAGE_SIZE = 20;

export class BerthCreditRequestsView extends LitElement {
  static override styles = [tokens, shared, page, credits];
  static override properties = {
    query: { attribute: false },
    askOrg: { state: true },
    askProject: { state: true },
    askAmount: { state: true },
    askProblem: { state: true },
    askBusy: { state: true },
    askError: { state: true },
    deciding: { state: true },
    decideAmount: { state: true },
    decideProblem: { state: true },
    decideBusy: { state: true },
    decideError: { state: true },
    error: { state: true },
    notice: { state: true },
  };
  declare query: URLSearchParams;
  declare askOrg: string;
  declare askProject: string;
  declare askAmount: string;
  declare askProblem: string | undefined;
  declare askBusy: boolean;
  declare askError: unknown;
  declare deciding: CreditRequest | undefined;
  declare decideAmount: string;
  declare decideProblem: string | undefined;
  declare decideBusy: boolean;
  declare decideError: unknown;
  declare error: unknown;
  declare notice: string | undefined;
  #askKey = new IntentKey(newIdempotencyKey);
  #decideKey = new IntentKey(newIdempotencyKey);

  #requests = new Task(this, {
    task: async ([status, pageNo], { signal }) =>
      loadCreditRequests(
        {
          page: pageNo as number,
          size: PAGE_SIZE,
          ...(status && status !== "any" ? { status: status as CreditRequest["status"] } : {}),
        },
        signal,
      ),
    args: () => {
      const f = this.filter;
      return [f.status, f.page];
    },
  });
  #directory = new Task(this, {
    task: async (_a, { signal }) => loadDirectory({ signal }),
    // The account's memberships decide whose names may be listed; a reload loads them after the page.
    args: () => [auth.me],
  });
  /** Wallets that may pay for the request being decided: those of its organization the person manages. */
  #payers = new Task(this, {
    task: async ([org], { signal }) => (org ? loadOrganizationWallets(org as string, signal) : undefined),
    args: () => [this.deciding?.organization_id ?? ""],
  });

  constructor() {
    super();
    this.query = new URLSearchParams();
    this.askOrg = "";
    this.askProject = "";
    this.askAmount = "";
    this.askProblem = undefined;
    this.askBusy = false;
    this.askError = undefined;
    this.deciding = undefined;
    this.decideAmount = "";
    this.decideProblem = undefined;
    this.decideBusy = false;
    this.decideError = undefined;
    this.error = undefined;
    this.notice = undefined;
  }

  /** A link such as the wizard's "Ask for credits" may suggest an amount (?amount=4): prefilled, still editable. */
  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    const suggested = this.query.get("amount");
    if (changed.has("query") && suggested && !this.askAmount) this.askAmount = suggested;
  }

  get manager(): boolean {
    return managesCredits(meForCredits());
  }

  get filter(): RequestsFilter {
    return requestsFilterFromQuery(this.query, this.manager);
  }

  #set(change: Partial<RequestsFilter>): void {
    const q = queryFromRequestsFilter({ ...this.filter, page: 1, ...change }, this.manager);
    router.navigate(`/credits/requests${q}`, { replace: true });
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

  async #ask(e: SubmitEvent, d: Directory): Promise<void> {
    e.preventDefault();
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
    this.notice = undefined;
    try {
      await requestCredits(body, this.#askKey.key);
      this.#askKey.settle();
      const where = project ? `${d.projects.get(project) ?? project}'s wallet` : "your wallet";
      this.notice = `Your request for ${creditsText(parsed.units)} for ${where} was sent. An administrator of ${d.organizations.get(org) ?? org} decides; the decision shows below.`;
      this.askAmount = "";
      form.reset();
      if (this.filter.status !== "any" && this.filter.status !== "pending") this.#set({ status: "any" });
      void this.#requests.run();
    } catch (err) {
      this.#askKey.settle(err);
      this.askError = err;
    } finally {
      this.askBusy = false;
    }
  }

  #openDecision(r: CreditRequest): void {
    this.deciding = r;
    this.decideAmount = unitsToInput(r.amount);
    this.decideProblem = undefined;
    this.decideError = undefined;
    this.notice = undefined;
    void this.updateComplete.then(() => this.renderRoot.querySelector<HTMLElement>("#decide-h")?.focus());
  }

  #closeDecision(): void {
    const id = this.deciding?.id;
    this.deciding = undefined;
    void this.updateComplete.then(() =>
      this.renderRoot.querySelector<HTMLElement>(`[data-request-id="${id}"] button`)?.focus(),
    );
  }

  async #decide(verdict: "approve" | "deny", form: HTMLFormElement, d: Directory): Promise<void> {
    const r = this.deciding;
    if (!r) return;
    const f = new FormData(form);
    const note = String(f.get("note") ?? "").trim();
    const from = String(f.get("from") ?? "");
    const who = this.#requester(r, d);
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
      this.notice =
        done.status === "denied"
          ? `Denied the request of ${who} for ${creditsText(r.amount)}.`
          : done.status === "partially_approved"
            ? `Partly approved: ${formatCredits(done.approved_amount)} of the ${creditsText(r.amount)} ${who} asked for.`
            : `Approved: ${creditsText(done.approved_amount ?? r.amount)} for ${who}.`;
      this.deciding = undefined;
      announceCreditsChanged();
      void this.#requests.run();
    } catch (err) {
      this.#decideKey.settle(err);
      this.decideError = err;
    } finally {
      this.decideBusy = false;
    }
  }

  async #withdraw(r: CreditRequest): Promise<void> {
    this.error = undefined;
    this.notice = undefined;
    try {
      await cancelCreditRequest(r.id);
      this.notice = `Withdrew your request for ${creditsText(r.amount)}.`;
      void this.#requests.run();
    } catch (err) {
      this.error = err;
    }
  }

  #requester(r: CreditRequest, d: Directory): string {
    return r.requester_id === auth.userId ? "you" : (d.users.get(r.requester_id) ?? r.requester_id);
  }

  #askForm(d: Directory) {
    const orgs = this.#myOrganizations();
    if (orgs.length === 0)
      return html`<section class="card" aria-labelledby="ask-h"><h2 id="ask-h">Ask for credits</h2>
        <p class="muted">Requests are made by members of an organization, for their own wallet or a project's. You belong to none.</p></section>`;
    const org = this.#org();
    const projects = this.#projectsOf(org, d);
    const wantedProject = this.askProject || this.query.get("project") || "";
    return html`<section class="card" aria-labelledby="ask-h">
      <h2 id="ask-h">Ask for credits</h2>
      <form @submit=${(e: SubmitEvent) => this.#ask(e, d)} data-testid="ask-form" novalidate>
        <div class="form-grid">
          <div class="field"><label for="ask-org">Organization</label>
            <select id="ask-org" name="organization" data-testid="ask-organization" @change=${(e: Event) => {
              this.askOrg = (e.target as HTMLSelectElement).value;
              this.askProject = "";
            }}>
              ${orgs.map((id) => html`<option value=${id} ?selected=${id === org}>${d.organizations.get(id) ?? id}</option>`)}
            </select></div>
          <div class="field"><label for="ask-for">For</label>
            <select id="ask-for" name="project" data-testid="ask-for" @change=${(e: Event) => (this.askProject = (e.target as HTMLSelectElement).value)}>
              <option value="" ?selected=${!wantedProject}>My own wallet</option>
              ${projects.map((p) => html`<option value=${p.id} ?selected=${p.id === wantedProject}>${p.name} (project wallet)</option>`)}
            </select></div>
          <div class="field"><label for="ask-amount">Amount (credits)</label>
            <input id="ask-amount" name="amount" inputmode="decimal" autocomplete="off" required data-testid="ask-amount"
              aria-describedby="ask-amount-hint${this.askProblem ? " ask-amount-problem" : ""}" aria-invalid=${this.askProblem ? "true" : "false"}
              .value=${this.askAmount} @input=${(e: Event) => {
                this.askAmount = (e.target as HTMLInputElement).value;
                this.askProblem = undefined;
              }} />
            <p class="hint" id="ask-amount-hint">Such as 100 or 12.5.</p>
            ${this.askProblem ? html`<p class="problem" id="ask-amount-problem" data-testid="ask-amount-problem">${this.askProblem}</p>` : nothing}
          </div>
          <div class="field wide"><label for="ask-reason">Reason</label>
            <textarea id="ask-reason" name="reason" required maxlength="1000" data-testid="ask-reason" aria-describedby="ask-reason-hint"></textarea>
            <p class="hint" id="ask-reason-hint">What the credits are for; the administrator who decides reads it.</p></div>
        </div>
        ${this.askError ? html`<berth-error-panel heading="The request was not sent" .error=${this.askError}></berth-error-panel>` : nothing}
        <button class="primary" type="submit" ?disabled=${this.askBusy} data-testid="ask-submit">${this.askBusy ? "Sending…" : "Send request"}</button>
      </form>
    </section>`;
  }

  #decidePanel(r: CreditRequest, d: Directory) {
    const payers = (this.#payers.value?.data ?? []).filter(
      (w) => w.id !== r.wallet_id && w.owner.kind !== "organization" && canManageWallet(w, meForCredits()),
    );
    return html`<section class="card" aria-labelledby="decide-h" data-testid="decide-panel">
      <h2 id="decide-h" tabindex="-1">Decide: ${this.#requester(r, d)} asks for ${creditsText(r.amount)}</h2>
      <p><strong>Reason:</strong> ${r.reason}</p>
      <form novalidate @submit=${(e: SubmitEvent) => {
        e.preventDefault();
        void this.#decide("approve", e.target as HTMLFormElement, d);
      }}>
        <div class="form-grid">
          <div class="field"><label for="decide-amount">Approve (credits)</label>
            <input id="decide-amount" name="amount" inputmode="decimal" autocomplete="off" data-testid="decide-amount"
              aria-describedby="decide-amount-hint${this.decideProblem ? " decide-amount-problem" : ""}" aria-invalid=${this.decideProblem ? "true" : "false"}
              .value=${this.decideAmount} @input=${(e: Event) => {
                this.decideAmount = (e.target as HTMLInputElement).value;
                this.decideProblem = undefined;
              }} />
            <p class="hint" id="decide-amount-hint">All ${formatCredits(r.amount)} asked for, or less to approve part of it.</p>
            ${this.decideProblem ? html`<p class="problem" id="decide-amount-problem">${this.decideProblem}</p>` : nothing}
          </div>
          <div class="field wide"><label for="decide-from">Paid from</label>
            <select id="decide-from" name="from" data-testid="decide-from">
              <option value="">The organization's wallet (${d.organizations.get(r.organization_id) ?? r.organization_id})</option>
              ${payers.map((w) => html`<option value=${w.id}>${walletLine(w, d)} · ${formatCredits(w.spendable)} available</option>`)}
            </select></div>
          <div class="field wide"><label for="decide-note">Note to ${this.#requester(r, d)} (optional)</label>
            <input id="decide-note" name="note" maxlength="1000" data-testid="decide-note" /></div>
        </div>
        ${this.decideError ? html`<berth-error-panel heading="The decision was not recorded" .error=${this.decideError}></berth-error-panel>` : nothing}
        <div class="actions">
          <button class="primary" type="submit" ?disabled=${this.decideBusy} data-testid="decide-approve">Approve</button>
          <button class="danger" type="button" ?disabled=${this.decideBusy} data-testid="decide-deny" @click=${(
            e: Event,
          ) => {
            const form = (e.target as HTMLElement).closest("form");
            if (form) void this.#decide("deny", form, d);
          }}>Deny</button>
          <button type="button" @click=${() => this.#closeDecision()}>Close</button>
        </div>
      </form>
    </section>`;
  }

  #table(rows: CreditRequest[], d: Directory) {
    const me = auth.userId;
    const manager = this.manager;
    // Focusable: at a phone's width the table scrolls sideways, and decided rows have nothing to reach.
    return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Credit requests"><table data-testid="requests-table">
      <caption class="visually-hidden">Credit requests</caption>
      <thead><tr><th scope="col">Asked</th><th scope="col">By</th><th scope="col">For</th><th scope="col" class="num">Amount</th>
        <th scope="col">Reason</th><th scope="col">Status</th><th scope="col">Actions</th></tr></thead>
      <tbody>${rows.map((r) => {
        const who = this.#requester(r, d);
        const forWhat = r.project_id
          ? `${d.projects.get(r.project_id) ?? r.project_id} (project)`
          : r.requester_id === me
            ? "Your wallet"
            : "Their own wallet";
        return html`<tr data-testid="request-row" data-request-id=${r.id} data-status=${r.status}>
          <td><span title=${formatTime(r.created_at)}>${formatRelative(r.created_at)}</span></td>
          <td>${who === "you" ? "You" : who}</td>
          <td>${forWhat}<br /><span class="muted">${d.organizations.get(r.organization_id) ?? r.organization_id}</span></td>
          <td class="num" data-testid="request-amount">${formatCredits(r.amount)}${
            r.approved_amount && r.approved_amount !== r.amount
              ? html`<br /><span class="muted">${formatCredits(r.approved_amount)} approved</span>`
              : nothing
          }</td>
          <td class="reason">${r.reason}${r.decision_note ? html`<br /><span class="muted">Note: ${r.decision_note}</span>` : nothing}</td>
          <td><span class="badge ${STATUS_TONE[r.status]}" data-testid="request-status">${STATUS_LABEL[r.status]}</span>${
            r.decided_at ? html`<br /><span class="muted">${formatRelative(r.decided_at)}</span>` : nothing
          }</td>
          <td class="actions">${
            r.status !== "pending"
              ? html`<span class="muted">—</span>`
              : r.requester_id === me
                ? html`<button type="button" @click=${() => this.#withdraw(r)} aria-label="Withdraw your request for ${formatCredits(r.amount)} credits" data-testid="request-withdraw">Withdraw</button>`
                : manager
                  ? html`<button type="button" class="primary" @click=${() => this.#openDecision(r)} aria-label="Decide the request of ${who} for ${formatCredits(r.amount)} credits" data-testid="request-decide">Decide</button>`
                  : html`<span class="muted">Waiting</span>`
          }</td>
        </tr>`;
      })}</tbody>
    </table></div>`;
  }

  override render() {
    const f = this.filter;
    const manager = this.manager;
    const d = this.#directory.value ?? { ...EMPTY_DIRECTORY, me: auth.userId };
    return html`<div class="page-head"><h1>Credit requests</h1></div>
      ${creditsNav("requests", manager)}
      ${this.notice ? html`<p class="success" role="status" data-testid="notice">${this.notice}</p>` : nothing}
      ${this.error ? html`<berth-error-panel heading="That did not work" .error=${this.error}></berth-error-panel>` : nothing}
      ${this.deciding ? this.#decidePanel(this.deciding, d) : nothing}
      ${this.#askForm(d)}
      <h2>${manager && f.status === "pending" ? "Waiting for a decision" : "Requests"}</h2>
      <div class="filters" role="search" aria-label="Filter requests">
        <div class="field"><label for="r-status">Status</label>
          <select id="r-status" data-testid="filter-status" @change=${(e: Event) => this.#set({ status: (e.target as HTMLSelectElement).value as RequestsFilter["status"] })}>
            <option value="any" ?selected=${f.status === "any"}>Any status</option>
            ${REQUEST_STATUSES.map((s) => html`<option value=${s} ?selected=${f.status === s}>${STATUS_LABEL[s]}</option>`)}
          </select></div>
      </div>
      ${renderTask(this.#requests, {
        pendingLabel: "Loading requests…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          f.status === "pending" && manager
            ? html`<berth-empty-state heading="Nothing waits for a decision">Requests of your organizations' members show here when they ask for credits.</berth-empty-state>`
            : f.status !== "any" || f.page > 1
              ? html`<berth-empty-state heading="No request matches this filter">Pick another status, or Any status.</berth-empty-state>`
              : html`<berth-empty-state heading="No request yet">Ask for credits with the form above; an administrator of your organization decides.</berth-empty-state>`,
        complete: (r) =>
          html`${this.#table(r.data, d)}<berth-pager .page=${r.pagination.page} .size=${r.pagination.size} .total=${r.pagination.total} @berth-page-change=${(e: CustomEvent<{ page: number }>) => this.#set({ page: e.detail.page })}></berth-pager>`,
      })}`;
  }
}
