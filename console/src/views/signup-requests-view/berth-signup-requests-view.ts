// The sign-up approval queue (super_admins): accounts made under the `approval` policy wait here, disabled,
// until approved (enabled, joined to the configured organization) or denied (left disabled).
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import type { SignupRequestEntry } from "../../api/openapi.gen.ts";
import { confirmAction } from "../../components/confirm-dialog/index.ts";
import "../../components/empty-state/index.ts";
import "../../components/error-panel/index.ts";
import "../../components/pager/index.ts";
import { decideSignup, loadSignupRequests } from "../../app/users.ts";
import { settingsNav } from "../../components/settings-nav.ts";
import { renderTask } from "../../components/task-states.ts";
import { formatTime } from "../../data/format.ts";
import { credits } from "../../styles/credits.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { SETTINGS_TEST_IDS } from "../../test-ids/settings.ts";

type Status = SignupRequestEntry["status"];

export class BerthSignupRequestsView extends LitElement {
  static override styles = [tokens, shared, page, credits];
  static override properties = {
    query: { attribute: false },
    pageNo: { state: true },
    error: { state: true },
    notice: { state: true },
  };
  declare query: URLSearchParams;
  declare pageNo: number;
  declare error: unknown;
  declare notice: string | undefined;

  #rows = new Task(this, {
    task: async ([status, pageNo], { signal }) => loadSignupRequests(status as Status, pageNo as number, signal),
    args: () => [this.#status, this.pageNo],
  });

  constructor() {
    super();
    this.query = new URLSearchParams();
    this.pageNo = 1;
    this.error = undefined;
    this.notice = undefined;
  }

  get #status(): Status {
    const s = this.query.get("status");
    return s === "approved" || s === "denied" ? s : "pending";
  }

  async #decide(r: SignupRequestEntry, decision: "approve" | "deny"): Promise<void> {
    if (
      decision === "deny" &&
      !(await confirmAction({
        heading: `Deny ${r.email}?`,
        body: "The account stays disabled and cannot sign in.",
        confirmLabel: "Deny",
        danger: true,
      }))
    )
      return;
    this.error = undefined;
    this.notice = undefined;
    try {
      await decideSignup(r.user_id, decision);
      this.notice = decision === "approve" ? `${r.email} may sign in now.` : `${r.email} was denied.`;
      void this.#rows.run();
    } catch (e) {
      this.error = e;
    }
  }

  #table(rows: SignupRequestEntry[]) {
    return html`<div class="table-wrap"><table data-testid=${SETTINGS_TEST_IDS.signupRequests}>
      <caption class="visually-hidden">Sign-up requests</caption>
      <thead><tr><th scope="col">Email</th><th scope="col">Asked</th><th scope="col">Joins</th><th scope="col">Status</th><th scope="col">Decided</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${rows.map(
        (r) => html`<tr data-testid=${SETTINGS_TEST_IDS.signupRequest} data-email=${r.email}>
          <td>${r.email}</td>
          <td><time datetime=${r.created_at}>${formatTime(r.created_at)}</time></td>
          <td>${r.organization_id ?? html`<span class="muted">no organization</span>`}</td>
          <td><span class="badge ${r.status === "approved" ? "tone-ok" : r.status === "denied" ? "tone-bad" : "tone-warn"}">${r.status}</span></td>
          <td>${r.decided_at ? html`<time datetime=${r.decided_at}>${formatTime(r.decided_at)}</time>` : "—"}</td>
          <td>${
            r.status === "pending"
              ? html`<div class="actions">
                  <button type="button" class="primary" @click=${() => this.#decide(r, "approve")} aria-label="Approve ${r.email}" data-testid=${SETTINGS_TEST_IDS.approve}>Approve</button>
                  <button type="button" @click=${() => this.#decide(r, "deny")} aria-label="Deny ${r.email}" data-testid=${SETTINGS_TEST_IDS.deny}>Deny</button></div>`
              : nothing
          }</td>
        </tr>`,
      )}</tbody>
    </table></div>`;
  }

  override render() {
    const tab = (s: Status, label: string) =>
      html`<a href="/admin/signups${s === "pending" ? "" : `?status=${s}`}" aria-current=${this.#status === s ? "page" : "false"}>${label}</a>`;
    return html`<div class="page-head"><h1>Sign-up requests</h1></div>
      ${settingsNav("signups")}
      <nav class="subnav" aria-label="Status">${tab("pending", "Waiting")} ${tab("approved", "Approved")} ${tab("denied", "Denied")}</nav>
      ${this.notice ? html`<p class="success" role="status" data-testid=${SETTINGS_TEST_IDS.signupNotice}>${this.notice}</p>` : nothing}
      ${this.error ? html`<berth-error-panel heading="That did not work" .error=${this.error}></berth-error-panel>` : nothing}
      ${renderTask(this.#rows, {
        pendingLabel: "Loading sign-up requests…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<berth-empty-state heading="Nobody is waiting">Accounts made under the approval policy wait here. Only super_admins see this queue.</berth-empty-state>`,
        complete: (r) =>
          html`${this.#table(r.data)}<berth-pager .page=${r.pagination.page} .size=${r.pagination.size} .total=${r.pagination.total} @berth-page-change=${(e: CustomEvent<{ page: number }>) => (this.pageNo = e.detail.page)}></berth-pager>`,
      })}`;
  }
}
