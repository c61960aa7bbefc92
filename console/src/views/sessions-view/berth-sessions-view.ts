// The sessions list: mine or all (for roles that see more), paged, filtered by state and cluster, kept
// live by the event stream (or polling when it dropped; the header's indicator says which). Admins can
// terminate several at once.
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import type { LiveChange } from "../../api/live-feed.ts";
import type { Session } from "../../api/openapi.gen.ts";
import { auth, feed, router } from "../../app/context.ts";
import { onSessionsChanged } from "../../app/live.ts";
import { confirmAction } from "../../components/confirm-dialog/index.ts";
import "../../components/error-panel/index.ts";
import "../../components/pager/index.ts";
import "../../components/phase-badge/index.ts";
import { loadGpuAvailability, loadSessions, terminateSessions } from "../../app/sessions.ts";
import { renderTask } from "../../components/task-states.ts";
import { formatRelative } from "../../data/format.ts";
import { PHASES } from "../../data/phases.ts";
import { filterFromQuery, queryFromFilter, type SessionsFilter } from "../../data/sessions-query.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { SESSIONS_TEST_IDS } from "../../test-ids/sessions.ts";

const PAGE_SIZE = 20;

export class BerthSessionsView extends LitElement {
  static override styles = [tokens, shared, page];
  static override properties = {
    query: { attribute: false },
    selected: { state: true },
    error: { state: true },
    notice: { state: true },
    updatedAt: { state: true },
  };
  declare query: URLSearchParams;
  declare selected: Set<string>;
  declare error: unknown;
  declare notice: string | undefined;
  declare updatedAt: number;
  /** Sessions as the stream last told them, shown over the fetched page until the next fetch. */
  #patched = new Map<string, Session>();
  #onStream = (e: Event) => {
    const s = ((e as CustomEvent<LiveChange>).detail.data as { session?: Session } | undefined)?.session;
    if (!s?.id || !this.#sessions.value?.data.some((x) => x.id === s.id)) return;
    this.#patched.set(s.id, s);
    this.requestUpdate();
  };
  #unsubscribe: (() => void) | undefined;
  #clock: ReturnType<typeof setInterval> | undefined;

  #sessions = new Task(this, {
    task: async ([scope, phase, cluster, pageNo], { signal }) => {
      const filter = { scope, phase, cluster, page: pageNo } as SessionsFilter;
      const r = await loadSessions(
        {
          scope: filter.scope,
          page: filter.page,
          size: PAGE_SIZE,
          ...(filter.phase ? { phase: filter.phase } : {}),
          ...(filter.cluster ? { cluster_id: filter.cluster } : {}),
        },
        signal,
      );
      this.updatedAt = Date.now();
      this.#patched.clear();
      return r;
    },
    // Primitives only: a fresh filter object per render would count as a change and loop.
    args: () => {
      const f = this.filter;
      return [f.scope, f.phase, f.cluster, f.page];
    },
  });
  /** Cluster names for the filter, from the GPU inventory every member may read. */
  #availability = new Task(this, {
    task: async (_a, { signal }) => loadGpuAvailability(signal),
    args: () => [],
  });

  constructor() {
    super();
    this.query = new URLSearchParams();
    this.selected = new Set();
    this.error = undefined;
    this.notice = undefined;
    this.updatedAt = 0;
  }

  get filter(): SessionsFilter {
    return filterFromQuery(this.query);
  }

  override connectedCallback(): void {
    super.connectedCallback();
    // A row changes the moment its event arrives; the debounced refetch then brings order, paging and
    // sessions new to this page.
    feed.addEventListener("change", this.#onStream);
    this.#unsubscribe = onSessionsChanged(() => void this.#sessions.run());
    this.#clock = setInterval(() => this.requestUpdate(), 5000);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#unsubscribe?.();
    feed.removeEventListener("change", this.#onStream);
    clearInterval(this.#clock);
  }

  #set(change: Partial<SessionsFilter>): void {
    const next = { ...this.filter, page: 1, ...change };
    this.selected = new Set();
    router.navigate(`/sessions${queryFromFilter(next)}`, { replace: true });
  }

  async #bulkTerminate(): Promise<void> {
    const ids = [...this.selected];
    const ok = await confirmAction({
      heading: `Terminate ${ids.length} session${ids.length === 1 ? "" : "s"}?`,
      body: "Each selected session ends for good; pods are deleted and GPUs returned. Files on volumes are kept.",
      confirmLabel: "Terminate",
      danger: true,
    });
    if (!ok) return;
    this.error = undefined;
    try {
      const r = await terminateSessions(ids);
      const refused = r.results.filter((x) => x.status === "refused");
      this.notice = `${r.results.length - refused.length} accepted${refused.length ? `, ${refused.length} refused: ${refused.map((x) => `${x.id} (${x.error?.message ?? "refused"})`).join("; ")}` : ""}.`;
      this.selected = new Set();
      void this.#sessions.run();
    } catch (e) {
      this.error = e;
    }
  }

  #toggle(id: string, on: boolean): void {
    const s = new Set(this.selected);
    if (on) s.add(id);
    else s.delete(id);
    this.selected = s;
  }

  #filters() {
    const f = this.filter;
    const clusters = new Map((this.#availability.value?.clusters ?? []).map((c) => [c.cluster_id, c.cluster_name]));
    return html`<div class="filters" role="search" aria-label="Filter sessions">
      ${
        auth.isAdmin
          ? html`<div class="field"><label for="f-scope">Whose</label>
            <select id="f-scope" data-testid=${SESSIONS_TEST_IDS.filterScope} @change=${(e: Event) => this.#set({ scope: (e.target as HTMLSelectElement).value === "all" ? "all" : "mine" })}>
              <option value="mine" ?selected=${f.scope === "mine"}>Mine</option><option value="all" ?selected=${f.scope === "all"}>All I can see</option>
            </select></div>`
          : nothing
      }
      <div class="field"><label for="f-state">State</label>
        <select id="f-state" data-testid=${SESSIONS_TEST_IDS.filterState} @change=${(e: Event) => this.#set({ phase: (e.target as HTMLSelectElement).value as SessionsFilter["phase"] })}>
          <option value="" ?selected=${!f.phase}>Any state</option>
          ${PHASES.map((p) => html`<option value=${p} ?selected=${f.phase === p}>${p}</option>`)}
        </select></div>
      <div class="field"><label for="f-cluster">Cluster</label>
        <select id="f-cluster" data-testid=${SESSIONS_TEST_IDS.filterCluster} @change=${(e: Event) => this.#set({ cluster: (e.target as HTMLSelectElement).value })}>
          <option value="" ?selected=${!f.cluster}>Any cluster</option>
          ${[...clusters].map(([id, name]) => html`<option value=${id} ?selected=${f.cluster === id}>${name}</option>`)}
          ${f.cluster && !clusters.has(f.cluster) ? html`<option value=${f.cluster} selected>${f.cluster}</option>` : nothing}
        </select></div>
    </div>`;
  }

  #table(rows: Session[]) {
    const bulk = auth.isAdmin;
    return html`<div class="table-wrap"><table data-testid=${SESSIONS_TEST_IDS.table}>
      <caption class="visually-hidden">Sessions</caption>
      <thead><tr>
        ${bulk ? html`<th scope="col"><span class="visually-hidden">Select</span></th>` : nothing}
        <th scope="col">Session</th><th scope="col">State</th><th scope="col">GPU</th><th scope="col">Cluster</th><th scope="col" class="hide-narrow">Created</th>
      </tr></thead>
      <tbody>${rows.map(
        (s) => html`<tr data-testid=${SESSIONS_TEST_IDS.row} data-session-id=${s.id} data-phase=${s.phase}>
          ${
            bulk
              ? html`<td><input type="checkbox" style="width:auto;min-height:0" aria-label="Select ${s.name ?? s.id}" .checked=${this.selected.has(s.id)} ?disabled=${!s.allowed_actions.includes("terminate")} @change=${(e: Event) => this.#toggle(s.id, (e.target as HTMLInputElement).checked)} /></td>`
              : nothing
          }
          <td><a href="/sessions/${encodeURIComponent(s.id)}" data-testid=${SESSIONS_TEST_IDS.link}>${s.name ?? s.resource_name}</a><br /><code class="muted">${s.id}</code></td>
          <td><berth-phase-badge .phase=${s.phase}></berth-phase-badge>${s.queue ? html`<br /><span class="muted">#${s.queue.position} in queue</span>` : nothing}</td>
          <td>${s.gpu_count} × ${s.gpu_model}</td>
          <td>${s.cluster_id ?? (s.cluster_pin ? html`<span class="muted">pinned to ${s.cluster_pin}</span>` : "—")}${s.node ? html`<br /><span class="muted">${s.node}</span>` : nothing}</td>
          <td class="hide-narrow">${formatRelative(s.created_at)}</td>
        </tr>`,
      )}</tbody>
    </table></div>`;
  }

  override render() {
    const f = this.filter;
    return html`<div class="page-head">
        <h1>Sessions</h1>
        <span class="muted" aria-live="off" data-testid=${SESSIONS_TEST_IDS.updatedAt}>${this.updatedAt ? `Updated ${formatRelative(new Date(this.updatedAt).toISOString())}` : ""}</span>
        <span class="spacer"></span>
        ${auth.isAdmin && this.selected.size > 0 ? html`<button type="button" class="danger" @click=${this.#bulkTerminate} data-testid=${SESSIONS_TEST_IDS.bulkTerminate}>Terminate ${this.selected.size} selected</button>` : nothing}
        <a class="button primary" href="/sessions/new" data-testid=${SESSIONS_TEST_IDS.newSession}>New session</a>
      </div>
      ${this.notice ? html`<p class="success" role="status">${this.notice}</p>` : nothing}
      ${this.error ? html`<berth-error-panel heading="That did not work" .error=${this.error}></berth-error-panel>` : nothing}
      ${this.#filters()}
      ${renderTask(this.#sessions, {
        pendingLabel: "Loading sessions…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          f.phase || f.cluster || f.page > 1
            ? html`<berth-empty-state heading="No session matches these filters">Change or clear the filters.</berth-empty-state>`
            : html`<berth-empty-state heading="No session yet">Start one: pick a GPU, an image, and go.<a slot="action" class="button primary" href="/sessions/new">New session</a></berth-empty-state>`,
        complete: (r) =>
          html`${this.#table(r.data.map((x) => this.#patched.get(x.id) ?? x))}<berth-pager .page=${r.pagination.page} .size=${r.pagination.size} .total=${r.pagination.total} @berth-page-change=${(e: CustomEvent<{ page: number }>) => this.#set({ page: e.detail.page })}></berth-pager>`,
      })}`;
  }
}
