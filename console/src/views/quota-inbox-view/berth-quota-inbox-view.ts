// The administrators' inbox of quota requests: those they may decide (an organization's admins every
// request there; a project's admins that project's shared limits; super_admins all), pending first.
// Deciding grants all, part (a lower value, or an emptied field for a limit not granted) or nothing,
// with a note the requester reads. The API refuses one's own request and a second decision (409).
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import { newIdempotencyKey } from "../../api/client.ts";
import type { QuotaRequest } from "../../api/openapi.gen.ts";
import { auth } from "../../app/context.ts";
import { loadDirectory } from "../../app/directory.ts";
import "../../components/empty-state/index.ts";
import "../../components/error-panel/index.ts";
import "../../components/pager/index.ts";
import { approveQuotaRequest, denyQuotaRequest, loadIncomingQuotaRequests } from "../../app/quotas.ts";
import { renderTask } from "../../components/task-states.ts";
import { type Directory, EMPTY_DIRECTORY } from "../../data/credits.ts";
import { formatRelative, formatTime } from "../../data/format.ts";
import { IntentKey } from "../../data/intent-key.ts";
import {
  askedLines,
  grantBody,
  limitLabel,
  QUOTA_STATUS_LABEL,
  QUOTA_STATUS_TONE,
  type QuotaStatus,
} from "../../data/quotas.ts";
import { credits } from "../../styles/credits.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { QUOTA_INBOX_TEST_IDS } from "../../test-ids/quota-inbox.ts";
import { SHELL_TEST_IDS } from "../../test-ids/shell.ts";

const PAGE_SIZE = 20;

export class BerthQuotaInboxView extends LitElement {
  static override styles = [tokens, shared, page, credits];
  static override properties = {
    status: { state: true },
    pageNo: { state: true },
    deciding: { state: true },
    grants: { state: true },
    problem: { state: true },
    busy: { state: true },
    decideError: { state: true },
    notice: { state: true },
  };
  declare status: QuotaStatus | "any";
  declare pageNo: number;
  declare deciding: QuotaRequest | undefined;
  declare grants: Record<string, string>;
  declare problem: { limit: string; text: string } | undefined;
  declare busy: boolean;
  declare decideError: unknown;
  declare notice: string | undefined;
  #key = new IntentKey(newIdempotencyKey);

  #requests = new Task(this, {
    task: async ([status, pageNo], { signal }) =>
      loadIncomingQuotaRequests(
        {
          page: pageNo as number,
          size: PAGE_SIZE,
          ...(status !== "any" ? { status: status as QuotaStatus } : {}),
        },
        signal,
      ),
    args: () => [this.status, this.pageNo],
  });
  #directory = new Task(this, {
    task: async (_a, { signal }) => loadDirectory({ signal }),
    args: () => [auth.me],
  });

  constructor() {
    super();
    this.status = "pending";
    this.pageNo = 1;
    this.deciding = undefined;
    this.grants = {};
    this.problem = undefined;
    this.busy = false;
    this.decideError = undefined;
    this.notice = undefined;
  }

  #who(r: QuotaRequest, d: Directory): string {
    return r.requester_email ?? d.users.get(r.requester_id) ?? r.requester_id;
  }

  #open(r: QuotaRequest): void {
    this.deciding = r;
    this.grants = Object.fromEntries(Object.entries(r.asked).map(([k, v]) => [k, String(v)]));
    this.problem = undefined;
    this.decideError = undefined;
    this.notice = undefined;
    void this.updateComplete.then(() => this.renderRoot.querySelector<HTMLElement>("#decide-h")?.focus());
  }

  async #decide(verdict: "approve" | "deny", form: HTMLFormElement, d: Directory): Promise<void> {
    const r = this.deciding;
    if (!r) return;
    const note = String(new FormData(form).get("note") ?? "").trim();
    this.decideError = undefined;
    let limits: Record<string, number> | undefined;
    if (verdict === "approve") {
      const g = grantBody(r.asked, this.grants);
      if (!g.ok) {
        this.problem = { limit: g.limit, text: g.problem };
        this.renderRoot.querySelector<HTMLInputElement>(`#grant-${g.limit}`)?.focus();
        return;
      }
      limits = g.limits;
    }
    this.busy = true;
    try {
      const done =
        verdict === "approve"
          ? await approveQuotaRequest(r.id, { ...(limits ? { limits } : {}), ...(note ? { note } : {}) }, this.#key.key)
          : await denyQuotaRequest(r.id, note ? { note } : {}, this.#key.key);
      this.#key.settle();
      this.notice =
        done.status === "denied"
          ? `Denied the request of ${this.#who(r, d)}.`
          : `${done.status === "partially_approved" ? "Partly approved" : "Approved"} the request of ${this.#who(r, d)}: policy ${done.policy} now says ${Object.entries(
              done.granted ?? {},
            )
              .map(([k, v]) => `${limitLabel(k)} ${v}`)
              .join(", ")}.`;
      this.deciding = undefined;
      void this.#requests.run();
    } catch (err) {
      this.#key.settle(err);
      this.decideError = err;
    } finally {
      this.busy = false;
    }
  }

  #panel(r: QuotaRequest, d: Directory) {
    return html`<section class="card" aria-labelledby="decide-h" data-testid=${QUOTA_INBOX_TEST_IDS.decidePanel}>
      <h2 id="decide-h" tabindex="-1">Decide: ${this.#who(r, d)} asks for more</h2>
      <p><strong>Where:</strong> ${d.organizations.get(r.organization_id) ?? r.organization_id}${
        r.scope === "project" && r.project_id
          ? ` · project ${d.projects.get(r.project_id) ?? r.project_id} (shared by its members)`
          : " · their own limits"
      }</p>
      <p><strong>Reason:</strong> ${r.reason}</p>
      <form novalidate @submit=${(e: SubmitEvent) => {
        e.preventDefault();
        void this.#decide("approve", e.target as HTMLFormElement, d);
      }}>
        <div class="form-grid">
          ${Object.entries(r.asked).map(
            ([name, want]) => html`<div class="field"><label for="grant-${name}">${limitLabel(name)}</label>
              <input id="grant-${name}" inputmode="numeric" autocomplete="off" data-testid=${QUOTA_INBOX_TEST_IDS.grant(name)} .value=${this.grants[name] ?? ""}
                aria-invalid=${this.problem?.limit === name ? "true" : "false"}
                aria-describedby="grant-${name}-hint${this.problem?.limit === name ? " grant-problem" : ""}"
                @input=${(e: Event) => {
                  this.grants = { ...this.grants, [name]: (e.target as HTMLInputElement).value };
                  this.problem = undefined;
                }} />
              <p class="hint" id="grant-${name}-hint">Now ${r.current[name] ?? "no limit"}; asked ${want}. Lower grants part; empty grants none of it.</p>
              ${this.problem?.limit === name ? html`<p class="problem" id="grant-problem" data-testid=${QUOTA_INBOX_TEST_IDS.grantProblem}>${this.problem.text}</p>` : nothing}
            </div>`,
          )}
          <div class="field wide"><label for="decide-note">Note to ${this.#who(r, d)} (optional)</label>
            <input id="decide-note" name="note" maxlength="1000" data-testid=${QUOTA_INBOX_TEST_IDS.note} /></div>
        </div>
        ${this.decideError ? html`<berth-error-panel heading="The decision was not recorded" .error=${this.decideError}></berth-error-panel>` : nothing}
        <div class="actions">
          <button class="primary" type="submit" ?disabled=${this.busy} data-testid=${QUOTA_INBOX_TEST_IDS.approve}>Approve</button>
          <button class="danger" type="button" ?disabled=${this.busy} data-testid=${QUOTA_INBOX_TEST_IDS.deny} @click=${(
            e: Event,
          ) => {
            const form = (e.target as HTMLElement).closest("form");
            if (form) void this.#decide("deny", form, d);
          }}>Deny</button>
          <button type="button" @click=${() => (this.deciding = undefined)}>Close</button>
        </div>
      </form>
    </section>`;
  }

  #table(rows: QuotaRequest[], d: Directory) {
    return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Quota requests to decide"><table data-testid=${QUOTA_INBOX_TEST_IDS.table}>
      <caption class="visually-hidden">Quota requests to decide</caption>
      <thead><tr><th scope="col">Asked</th><th scope="col">By</th><th scope="col">Where</th><th scope="col">Limits</th>
        <th scope="col">Reason</th><th scope="col">Status</th><th scope="col">Actions</th></tr></thead>
      <tbody>${rows.map(
        (r) => html`<tr data-testid=${QUOTA_INBOX_TEST_IDS.row} data-request-id=${r.id} data-status=${r.status}>
          <td><span title=${formatTime(r.created_at)}>${formatRelative(r.created_at)}</span></td>
          <td>${this.#who(r, d)}</td>
          <td>${d.organizations.get(r.organization_id) ?? r.organization_id}<br /><span class="muted">${
            r.scope === "project" && r.project_id
              ? `project ${d.projects.get(r.project_id) ?? r.project_id}`
              : "their own limits"
          }</span></td>
          <td>${askedLines(r.asked, r.current, r.granted).map((l) => html`${l}<br />`)}</td>
          <td class="reason">${r.reason}${r.decision_note ? html`<br /><span class="muted">Note: ${r.decision_note}</span>` : nothing}</td>
          <td><span class="badge ${QUOTA_STATUS_TONE[r.status]}" data-testid=${QUOTA_INBOX_TEST_IDS.status}>${QUOTA_STATUS_LABEL[r.status]}</span></td>
          <td>${
            r.can_decide
              ? html`<button type="button" class="primary" @click=${() => this.#open(r)} data-testid=${QUOTA_INBOX_TEST_IDS.decide} aria-label="Decide the request of ${this.#who(r, d)}">Decide</button>`
              : html`<span class="muted">—</span>`
          }</td>
        </tr>`,
      )}</tbody>
    </table></div>`;
  }

  override render() {
    const d = this.#directory.value ?? { ...EMPTY_DIRECTORY, me: auth.userId };
    return html`<div class="page-head"><h1>Quota requests</h1><a href="/quotas">Your own limits</a></div>
      ${this.notice ? html`<p class="success" role="status" data-testid=${SHELL_TEST_IDS.notice}>${this.notice}</p>` : nothing}
      ${this.deciding ? this.#panel(this.deciding, d) : nothing}
      <div class="filters" role="search" aria-label="Filter requests">
        <div class="field"><label for="i-status">Status</label>
          <select id="i-status" data-testid=${QUOTA_INBOX_TEST_IDS.filterStatus} @change=${(e: Event) => {
            this.status = (e.target as HTMLSelectElement).value as QuotaStatus | "any";
            this.pageNo = 1;
          }}>
            <option value="any" ?selected=${this.status === "any"}>Any status</option>
            ${(Object.keys(QUOTA_STATUS_LABEL) as QuotaStatus[]).map((s) => html`<option value=${s} ?selected=${this.status === s}>${QUOTA_STATUS_LABEL[s]}</option>`)}
          </select></div>
      </div>
      ${renderTask(this.#requests, {
        pendingLabel: "Loading requests…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          this.status === "pending"
            ? html`<berth-empty-state heading="Nothing waits for a decision">Requests of the people whose limits you decide show here when they ask.</berth-empty-state>`
            : html`<berth-empty-state heading="No request matches this filter">Pick another status, or Any status.</berth-empty-state>`,
        complete: (r) =>
          html`${this.#table(r.data, d)}<berth-pager .page=${r.pagination.page} .size=${r.pagination.size} .total=${r.pagination.total} @berth-page-change=${(e: CustomEvent<{ page: number }>) => (this.pageNo = e.detail.page)}></berth-pager>`,
      })}`;
  }
}
