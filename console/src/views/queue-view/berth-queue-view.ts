// The queue: sessions waiting for a GPU, with their position (among sessions waiting for the same
// model), why they wait (model, pinned cluster, limit) and since when; cancel, and change priority where
// the policy allows (the API refuses beyond it and the page says why).
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import type { QueueEntry } from "../../api/openapi.gen.ts";
import { auth } from "../../app/context.ts";
import { onSessionsChanged } from "../../app/live.ts";
import { confirmAction } from "../../components/confirm-dialog/index.ts";
import "../../components/error-panel/index.ts";
import "../../components/pager/index.ts";
import { cancelQueuedSession, changeQueuePriority, loadQueue } from "../../app/sessions.ts";
import { renderTask } from "../../components/task-states.ts";
import { formatRelative } from "../../data/format.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { QUEUE_TEST_IDS } from "../../test-ids/queue.ts";

export class BerthQueueView extends LitElement {
  static override styles = [tokens, shared, page];
  static override properties = {
    scope: { state: true },
    pageNo: { state: true },
    error: { state: true },
    notice: { state: true },
  };
  declare scope: "mine" | "all";
  declare pageNo: number;
  declare error: unknown;
  declare notice: string | undefined;
  #unsubscribe: (() => void) | undefined;

  #queue = new Task(this, {
    task: async ([scope, pageNo], { signal }) => loadQueue(scope as "mine" | "all", pageNo as number, signal),
    args: () => [this.scope, this.pageNo],
  });

  constructor() {
    super();
    this.scope = "mine";
    this.pageNo = 1;
    this.error = undefined;
    this.notice = undefined;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.#unsubscribe = onSessionsChanged(() => void this.#queue.run());
  }
  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#unsubscribe?.();
  }

  async #cancel(q: QueueEntry): Promise<void> {
    const name = q.session.name ?? q.session.resource_name;
    if (
      !(await confirmAction({
        heading: `Cancel ${name}?`,
        body: "It leaves the queue and is terminated; it never started, so nothing is lost and nothing was charged.",
        confirmLabel: "Cancel session",
        danger: true,
      }))
    )
      return;
    await this.#do(`${name} left the queue.`, () => cancelQueuedSession(q.session.id));
  }

  async #priority(e: SubmitEvent, q: QueueEntry): Promise<void> {
    e.preventDefault();
    const priority = Number(new FormData(e.target as HTMLFormElement).get("priority"));
    await this.#do(`Priority of ${q.session.name ?? q.session.resource_name} is now ${priority}.`, () =>
      changeQueuePriority(q.session.id, priority),
    );
  }

  async #do(notice: string, fn: () => Promise<unknown>): Promise<void> {
    this.error = undefined;
    this.notice = undefined;
    try {
      await fn();
      this.notice = notice;
      void this.#queue.run();
    } catch (err) {
      this.error = err;
    }
  }

  #table(rows: QueueEntry[]) {
    return html`<div class="table-wrap"><table data-testid=${QUEUE_TEST_IDS.table}>
      <caption class="visually-hidden">Queued sessions</caption>
      <thead><tr><th scope="col">Position</th><th scope="col">Session</th><th scope="col">Waiting for</th><th scope="col">Why</th><th scope="col" class="hide-narrow">Since</th><th scope="col">Priority</th><th scope="col">Actions</th></tr></thead>
      <tbody>${rows.map((q) => {
        const s = q.session;
        return html`<tr data-testid=${QUEUE_TEST_IDS.row} data-session-id=${s.id}>
          <td><strong data-testid=${QUEUE_TEST_IDS.position}>#${q.position}</strong></td>
          <td><a href="/sessions/${encodeURIComponent(s.id)}">${s.name ?? s.resource_name}</a>${s.owner_id !== auth.userId ? html`<br /><span class="muted">${s.owner_id}</span>` : nothing}</td>
          <td>${s.gpu_count} × ${s.gpu_model}${s.cluster_pin ? html`<br /><span class="muted">on ${s.cluster_pin}</span>` : nothing}</td>
          <td data-testid=${QUEUE_TEST_IDS.reason}>${q.reason}</td>
          <td class="hide-narrow">${formatRelative(q.waiting_since)}</td>
          <td><form class="row" @submit=${(e: SubmitEvent) => this.#priority(e, q)}>
            <label class="visually-hidden" for="prio-${s.id}">Priority of ${s.name ?? s.id}</label>
            <input id="prio-${s.id}" name="priority" type="number" min="-1000" max="1000" step="1" style="width:5.5rem" .value=${String(s.priority)} />
            <button type="submit">Set</button>
          </form></td>
          <td><button type="button" class="danger" @click=${() => this.#cancel(q)} aria-label="Cancel ${s.name ?? s.id}">Cancel</button></td>
        </tr>`;
      })}</tbody>
    </table></div>`;
  }

  override render() {
    return html`<div class="page-head"><h1>Queue</h1></div>
      <p class="muted">Sessions wait here when no GPU of their model is free (or their pinned cluster is full). They start on their own, highest priority first, then oldest.</p>
      ${this.notice ? html`<p class="success" role="status">${this.notice}</p>` : nothing}
      ${this.error ? html`<berth-error-panel heading="That did not work" .error=${this.error}></berth-error-panel>` : nothing}
      ${
        auth.isAdmin
          ? html`<div class="filters"><div class="field"><label for="q-scope">Whose</label>
            <select id="q-scope" @change=${(e: Event) => {
              this.scope = (e.target as HTMLSelectElement).value === "all" ? "all" : "mine";
              this.pageNo = 1;
            }}><option value="mine">Mine</option><option value="all">All I can see</option></select></div></div>`
          : nothing
      }
      ${renderTask(this.#queue, {
        pendingLabel: "Loading the queue…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<berth-empty-state heading="Nothing is waiting">Every session has its GPU. New sessions queue here when their GPU model is fully used.</berth-empty-state>`,
        complete: (r) =>
          html`${this.#table(r.data)}<berth-pager .page=${r.pagination.page} .size=${r.pagination.size} .total=${r.pagination.total} @berth-page-change=${(e: CustomEvent<{ page: number }>) => (this.pageNo = e.detail.page)}></berth-pager>`,
      })}`;
  }
}
