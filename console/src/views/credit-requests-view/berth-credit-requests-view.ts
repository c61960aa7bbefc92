// Credit requests: a member asks for credits with a reason (for their own wallet in an organization, or
// a project's they belong to); administrators see the pending requests and approve them, all or part
// (an allocation from a wallet they manage, by default the organization's), or deny them with a note.
// The requester may withdraw a pending request. The page composes three parts: the ask form
// (berth-credit-ask.ts), the decision (berth-credit-decide.ts) and the table (requests-table.ts).
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import type { CreditRequest } from "../../api/openapi.gen.ts";
import { auth, router } from "../../app/context.ts";
import { announceCreditsChanged, cancelCreditRequest, loadCreditRequests, meForCredits } from "../../app/credits.ts";
import { loadDirectory } from "../../app/directory.ts";
import { creditsNav } from "../../components/credits-nav.ts";
import "../../components/empty-state/index.ts";
import "../../components/error-panel/index.ts";
import "../../components/pager/index.ts";
import { renderTask } from "../../components/task-states.ts";
import {
  creditsText,
  EMPTY_DIRECTORY,
  managesCredits,
  queryFromRequestsFilter,
  REQUEST_STATUSES,
  type RequestsFilter,
  requestsFilterFromQuery,
  STATUS_LABEL,
} from "../../data/credits.ts";
import { credits } from "../../styles/credits.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { CREDITS_TEST_IDS } from "../../test-ids/credits.ts";
import { SHELL_TEST_IDS } from "../../test-ids/shell.ts";
import {
  CREDIT_DECIDE_CLOSE,
  CREDIT_NOTICE,
  CREDIT_REQUEST_DECIDED,
  CREDIT_REQUEST_SENT,
  type CreditNoticeEvent,
} from "./events.ts";
import { requestsTable } from "./requests-table.ts";

const PAGE_SIZE = 20;

export class BerthCreditRequestsView extends LitElement {
  static override styles = [tokens, shared, page, credits];
  static override properties = {
    query: { attribute: false },
    deciding: { state: true },
    error: { state: true },
    notice: { state: true },
  };
  declare query: URLSearchParams;
  declare deciding: CreditRequest | undefined;
  declare error: unknown;
  declare notice: string | undefined;

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

  constructor() {
    super();
    this.query = new URLSearchParams();
    this.deciding = undefined;
    this.error = undefined;
    this.notice = undefined;
    this.addEventListener(CREDIT_NOTICE, (e) => {
      this.notice = (e as CreditNoticeEvent).detail.text;
    });
    this.addEventListener(CREDIT_REQUEST_SENT, () => {
      if (this.filter.status !== "any" && this.filter.status !== "pending") this.#set({ status: "any" });
      void this.#requests.run();
    });
    this.addEventListener(CREDIT_REQUEST_DECIDED, () => {
      this.deciding = undefined;
      announceCreditsChanged();
      void this.#requests.run();
    });
    this.addEventListener(CREDIT_DECIDE_CLOSE, () => this.#closeDecision());
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

  #openDecision(r: CreditRequest): void {
    this.deciding = r;
    this.notice = undefined;
  }

  #closeDecision(): void {
    const id = this.deciding?.id;
    this.deciding = undefined;
    void this.updateComplete.then(() =>
      this.renderRoot.querySelector<HTMLElement>(`[data-request-id="${id}"] button`)?.focus(),
    );
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

  override render() {
    const f = this.filter;
    const manager = this.manager;
    const d = this.#directory.value ?? { ...EMPTY_DIRECTORY, me: auth.userId };
    return html`<div class="page-head"><h1>Credit requests</h1></div>
      ${creditsNav("requests", manager)}
      ${this.notice ? html`<p class="success" role="status" data-testid=${SHELL_TEST_IDS.notice}>${this.notice}</p>` : nothing}
      ${this.error ? html`<berth-error-panel heading="That did not work" .error=${this.error}></berth-error-panel>` : nothing}
      ${this.deciding ? html`<berth-credit-decide .request=${this.deciding} .directory=${d}></berth-credit-decide>` : nothing}
      <berth-credit-ask .directory=${d} .query=${this.query}></berth-credit-ask>
      <h2>${manager && f.status === "pending" ? "Waiting for a decision" : "Requests"}</h2>
      <div class="filters" role="search" aria-label="Filter requests">
        <div class="field"><label for="r-status">Status</label>
          <select id="r-status" data-testid=${CREDITS_TEST_IDS.filterStatus} @change=${(e: Event) => this.#set({ status: (e.target as HTMLSelectElement).value as RequestsFilter["status"] })}>
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
          html`${requestsTable({
            rows: r.data,
            directory: d,
            me: auth.userId,
            manager,
            onWithdraw: (x) => void this.#withdraw(x),
            onDecide: (x) => this.#openDecision(x),
          })}<berth-pager .page=${r.pagination.page} .size=${r.pagination.size} .total=${r.pagination.total} @berth-page-change=${(e: CustomEvent<{ page: number }>) => this.#set({ page: e.detail.page })}></berth-pager>`,
      })}`;
  }
}
