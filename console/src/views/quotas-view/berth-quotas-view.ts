// My limits: what each resource-policy limit is where I work (an organization, optionally a project),
// how much of it I use, the headroom and the policy it comes from; a form to ask for more with a reason;
// my requests and their decisions. Those who may decide others' requests get a link to the inbox.
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import { newIdempotencyKey } from "../../api/client.ts";
import type { EffectiveLimits, QuotaRequest } from "../../api/openapi.gen.ts";
import { auth } from "../../app/context.ts";
import { loadDirectory } from "../../app/directory.ts";
import "../../components/empty-state/index.ts";
import "../../components/error-panel/index.ts";
import { cancelQuotaRequest, loadEffectiveLimits, loadMyQuotaRequests, requestQuota } from "../../app/quotas.ts";
import { renderTask } from "../../components/task-states.ts";
import { type Directory, EMPTY_DIRECTORY } from "../../data/credits.ts";
import { formatRelative, formatTime } from "../../data/format.ts";
import { IntentKey } from "../../data/intent-key.ts";
import { askedLines, limitLabel, QUOTA_STATUS_LABEL, QUOTA_STATUS_TONE } from "../../data/quotas.ts";
import { credits } from "../../styles/credits.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { QUOTAS_TEST_IDS } from "../../test-ids/quotas.ts";
import { SHELL_TEST_IDS } from "../../test-ids/shell.ts";

type Limit = EffectiveLimits["limits"][number];

export class BerthQuotasView extends LitElement {
  static override styles = [tokens, shared, page, credits];
  static override properties = {
    org: { state: true },
    project: { state: true },
    askLimit: { state: true },
    askValue: { state: true },
    askProblem: { state: true },
    askBusy: { state: true },
    askError: { state: true },
    error: { state: true },
    notice: { state: true },
  };
  declare org: string;
  declare project: string;
  declare askLimit: string;
  declare askValue: string;
  declare askProblem: string | undefined;
  declare askBusy: boolean;
  declare askError: unknown;
  declare error: unknown;
  declare notice: string | undefined;
  #askKey = new IntentKey(newIdempotencyKey);

  #effective = new Task(this, {
    task: async ([org, project], { signal }) =>
      org
        ? loadEffectiveLimits({ organization: org as string, project: (project as string) || undefined }, signal)
        : undefined,
    args: () => [this.#org(), this.project],
  });
  #mine = new Task(this, {
    task: async (_a, { signal }) => loadMyQuotaRequests(signal),
    args: () => [],
  });
  #directory = new Task(this, {
    task: async (_a, { signal }) => loadDirectory({ signal }),
    args: () => [auth.me],
  });

  constructor() {
    super();
    this.org = "";
    this.project = "";
    this.askLimit = "";
    this.askValue = "";
    this.askProblem = undefined;
    this.askBusy = false;
    this.askError = undefined;
    this.error = undefined;
    this.notice = undefined;
  }

  #orgs(): string[] {
    return [...new Set((auth.me?.memberships ?? []).map((m) => m.organization_id))];
  }
  #org(): string {
    const orgs = this.#orgs();
    return orgs.includes(this.org) ? this.org : (orgs[0] ?? "");
  }
  #projects(): string[] {
    const org = this.#org();
    return [
      ...new Set(
        (auth.me?.memberships ?? []).flatMap((m) => (m.organization_id === org && m.project_id ? [m.project_id] : [])),
      ),
    ];
  }
  /** May decide someone's requests: administers an organization or a project (super_admins all). */
  get decides(): boolean {
    return (
      auth.isSuperAdmin || !!auth.me?.memberships.some((m) => m.role === "org_admin" || m.role === "project_admin")
    );
  }

  #startAsk(l: Limit): void {
    this.askLimit = l.name;
    this.askValue = l.value === null ? "" : String(l.value + 1);
    this.askProblem = undefined;
    void this.updateComplete.then(() => this.renderRoot.querySelector<HTMLInputElement>("#ask-value")?.focus());
  }

  async #ask(e: SubmitEvent, limits: Limit[]): Promise<void> {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const reason = String(new FormData(form).get("reason") ?? "").trim();
    const limit = limits.find((l) => l.name === this.askLimit);
    const value = this.askValue.trim();
    this.askProblem = !limit
      ? "Pick the limit to raise."
      : !/^\d+$/.test(value)
        ? "A whole number."
        : limit.value !== null && Number(value) <= limit.value
          ? `Ask for more than the ${limit.value} you have.`
          : undefined;
    if (this.askProblem || !limit) {
      this.renderRoot.querySelector<HTMLInputElement>(limit ? "#ask-value" : "#ask-limit")?.focus();
      return;
    }
    const body = {
      organization_id: this.#org(),
      ...(this.project ? { project_id: this.project } : {}),
      scope: limit.requestable ?? "user",
      limits: { [limit.name]: Number(value) },
      reason,
    };
    this.askBusy = true;
    this.askError = undefined;
    this.notice = undefined;
    try {
      await requestQuota(body, this.#askKey.key);
      this.#askKey.settle();
      this.notice = `Your request for ${limitLabel(limit.name)}: ${value} was sent. An administrator decides; you are notified.`;
      this.askLimit = "";
      this.askValue = "";
      form.reset();
      void this.#mine.run();
    } catch (err) {
      this.#askKey.settle(err);
      this.askError = err;
    } finally {
      this.askBusy = false;
    }
  }

  async #withdraw(r: QuotaRequest): Promise<void> {
    this.error = undefined;
    try {
      await cancelQuotaRequest(r.id);
      this.notice = "Withdrew your request.";
      void this.#mine.run();
    } catch (err) {
      this.error = err;
    }
  }

  #place(names: Directory) {
    const orgs = this.#orgs();
    return html`<div class="filters" role="group" aria-label="Where">
      <div class="field"><label for="q-org">Organization</label>
        <select id="q-org" data-testid=${QUOTAS_TEST_IDS.organization} @change=${(e: Event) => {
          this.org = (e.target as HTMLSelectElement).value;
          this.project = "";
        }}>
          ${orgs.map((id) => html`<option value=${id} ?selected=${id === this.#org()}>${names.organizations.get(id) ?? id}</option>`)}
        </select></div>
      <div class="field"><label for="q-project">Project</label>
        <select id="q-project" data-testid=${QUOTAS_TEST_IDS.project} @change=${(e: Event) => (this.project = (e.target as HTMLSelectElement).value)}>
          <option value="" ?selected=${!this.project}>No project</option>
          ${this.#projects().map((id) => html`<option value=${id} ?selected=${id === this.project}>${names.projects.get(id) ?? id}</option>`)}
        </select></div>
    </div>`;
  }

  #limitsTable(e: EffectiveLimits) {
    return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Your limits"><table data-testid=${QUOTAS_TEST_IDS.limitsTable}>
      <caption class="visually-hidden">Your limits here</caption>
      <thead><tr><th scope="col">Limit</th><th scope="col" class="num">Limit value</th><th scope="col" class="num">In use</th>
        <th scope="col" class="num">Headroom</th><th scope="col">Set by</th><th scope="col">Actions</th></tr></thead>
      <tbody>${e.limits.map(
        (l) => html`<tr data-testid=${QUOTAS_TEST_IDS.limitRow} data-limit=${l.name}>
          <th scope="row">${limitLabel(l.name)}</th>
          <td class="num" data-testid=${QUOTAS_TEST_IDS.limitValue}>${l.value ?? html`<span class="muted">no limit</span>`}</td>
          <td class="num">${l.used ?? html`<span class="muted">—</span>`}</td>
          <td class="num" data-testid=${QUOTAS_TEST_IDS.limitHeadroom}>${
            l.headroom === null
              ? html`<span class="muted">—</span>`
              : html`<span class=${l.headroom === 0 ? "tone-bad" : ""}>${l.headroom}</span>`
          }</td>
          <td data-testid=${QUOTAS_TEST_IDS.limitPolicy}>${
            l.policy
              ? html`<span class="mono">${l.policy}</span>${l.scope && l.scope !== l.policy ? html`<br /><span class="muted">${l.scope}</span>` : nothing}`
              : html`<span class="muted">no policy</span>`
          }</td>
          <td>${
            l.requestable && l.value !== null && (l.requestable === "user" || this.project)
              ? html`<button type="button" @click=${() => this.#startAsk(l)} data-testid=${QUOTAS_TEST_IDS.askMore(l.name)} aria-label="Ask for more: ${limitLabel(l.name)}">Ask for more</button>`
              : html`<span class="muted">—</span>`
          }</td>
        </tr>`,
      )}</tbody>
    </table></div>
    ${e.allowed_offerings.value ? html`<p class="muted">Offerings allowed here: ${e.allowed_offerings.value.join(", ")} (${e.allowed_offerings.policy}).</p>` : nothing}`;
  }

  #askForm(e: EffectiveLimits) {
    const limits = e.limits.filter(
      (l) => l.requestable && l.value !== null && (l.requestable === "user" || e.project_id),
    );
    const chosen = limits.find((l) => l.name === this.askLimit);
    return html`<section class="card" aria-labelledby="ask-h">
      <h2 id="ask-h">Ask for more</h2>
      <form novalidate data-testid=${QUOTAS_TEST_IDS.askForm} @submit=${(ev: SubmitEvent) => this.#ask(ev, limits)}>
        <div class="form-grid">
          <div class="field"><label for="ask-limit">Limit</label>
            <select id="ask-limit" data-testid=${QUOTAS_TEST_IDS.askLimit} @change=${(ev: Event) => {
              this.askLimit = (ev.target as HTMLSelectElement).value;
              this.askProblem = undefined;
            }}>
              <option value="" ?selected=${!chosen}>Pick a limit…</option>
              ${limits.map((l) => html`<option value=${l.name} ?selected=${l.name === this.askLimit}>${limitLabel(l.name)} (now ${l.value})</option>`)}
            </select></div>
          <div class="field"><label for="ask-value">New value</label>
            <input id="ask-value" inputmode="numeric" autocomplete="off" data-testid=${QUOTAS_TEST_IDS.askValue} .value=${this.askValue}
              aria-invalid=${this.askProblem ? "true" : "false"} aria-describedby="ask-value-hint${this.askProblem ? " ask-problem" : ""}"
              @input=${(ev: Event) => {
                this.askValue = (ev.target as HTMLInputElement).value;
                this.askProblem = undefined;
              }} />
            <p class="hint" id="ask-value-hint">${chosen ? `Now ${chosen.value}${chosen.requestable === "project" ? ", shared by the project" : ""}.` : "More than you have now."}</p>
            ${this.askProblem ? html`<p class="problem" id="ask-problem" data-testid=${QUOTAS_TEST_IDS.askProblem}>${this.askProblem}</p>` : nothing}</div>
          <div class="field wide"><label for="ask-why">Reason</label>
            <textarea id="ask-why" name="reason" required maxlength="2000" data-testid=${QUOTAS_TEST_IDS.askReason} aria-describedby="ask-why-hint"></textarea>
            <p class="hint" id="ask-why-hint">What you need it for; the administrator who decides reads it.</p></div>
        </div>
        ${this.askError ? html`<berth-error-panel heading="The request was not sent" .error=${this.askError}></berth-error-panel>` : nothing}
        <button class="primary" type="submit" ?disabled=${this.askBusy} data-testid=${QUOTAS_TEST_IDS.askSend}>${this.askBusy ? "Sending…" : "Send request"}</button>
      </form>
    </section>`;
  }

  #mineTable(rows: QuotaRequest[], names: Directory) {
    return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Your requests"><table data-testid=${QUOTAS_TEST_IDS.myRequests}>
      <caption class="visually-hidden">Your quota requests</caption>
      <thead><tr><th scope="col">Asked</th><th scope="col">Where</th><th scope="col">Limits</th><th scope="col">Reason</th>
        <th scope="col">Status</th><th scope="col">Actions</th></tr></thead>
      <tbody>${rows.map(
        (r) => html`<tr data-testid=${QUOTAS_TEST_IDS.requestRow} data-request-id=${r.id} data-status=${r.status}>
          <td><span title=${formatTime(r.created_at)}>${formatRelative(r.created_at)}</span></td>
          <td>${names.organizations.get(r.organization_id) ?? r.organization_id}${
            r.scope === "project" && r.project_id
              ? html`<br /><span class="muted">project ${names.projects.get(r.project_id) ?? r.project_id}</span>`
              : nothing
          }</td>
          <td>${askedLines(r.asked, r.current, r.granted).map((l) => html`${l}<br />`)}</td>
          <td class="reason">${r.reason}${r.decision_note ? html`<br /><span class="muted">Note: ${r.decision_note}</span>` : nothing}</td>
          <td><span class="badge ${QUOTA_STATUS_TONE[r.status]}" data-testid=${QUOTAS_TEST_IDS.requestStatus}>${QUOTA_STATUS_LABEL[r.status]}</span></td>
          <td>${r.status === "pending" ? html`<button type="button" @click=${() => this.#withdraw(r)} data-testid=${QUOTAS_TEST_IDS.withdraw}>Withdraw</button>` : html`<span class="muted">—</span>`}</td>
        </tr>`,
      )}</tbody>
    </table></div>`;
  }

  override render() {
    const d = this.#directory.value ?? { ...EMPTY_DIRECTORY, me: auth.userId };
    if (this.#orgs().length === 0)
      return html`<div class="page-head"><h1>Limits</h1></div>
        <berth-empty-state heading="You belong to no organization">Limits apply where you work; an administrator adds you to an organization.</berth-empty-state>`;
    return html`<div class="page-head"><h1>Limits</h1>${
      this.decides
        ? html`<a class="button" href="/quotas/requests" data-testid=${QUOTAS_TEST_IDS.inboxLink}>Requests to decide</a>`
        : nothing
    }</div>
      ${this.notice ? html`<p class="success" role="status" data-testid=${SHELL_TEST_IDS.notice}>${this.notice}</p>` : nothing}
      ${this.error ? html`<berth-error-panel heading="That did not work" .error=${this.error}></berth-error-panel>` : nothing}
      ${this.#place(d)}
      ${renderTask(this.#effective, {
        pendingLabel: "Loading your limits…",
        isEmpty: (e) => e === undefined,
        empty: () =>
          html`<berth-empty-state heading="Pick an organization">Your limits depend on where you work.</berth-empty-state>`,
        complete: (e) => (e ? html`${this.#limitsTable(e)}${this.#askForm(e)}` : nothing),
      })}
      <h2>Your requests</h2>
      ${renderTask(this.#mine, {
        pendingLabel: "Loading your requests…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<berth-empty-state heading="No request yet">Use "Ask for more" on a limit above.</berth-empty-state>`,
        complete: (r) => this.#mineTable(r.data, d),
      })}`;
  }
}
