// Fair share for administrators (docs/dev/fair-share.md): per organization, project and user and per GPU
// model what is guaranteed, in use, borrowed beyond the guarantee and lent to others, with the weight, the
// decayed usage and the share of it against the fair share; then the reclaim log (whose borrowed session
// gave its GPUs back, for which guaranteed one, and when it was warned, paused and resumed). The API
// scopes both: a super_admin sees every organization, an organization admin theirs.
import { Task } from "@lit/task";
import { css, html, LitElement, nothing } from "lit";
import type { CapacityReclaim, FairShare } from "../../api/openapi.gen.ts";
import { loadCapacityReclaims, loadFairShare } from "../../app/fairShare.ts";
import "../../components/empty-state/index.ts";
import "../../components/pager/index.ts";
import { renderTask } from "../../components/task-states.ts";
import { gpus, hours, reclaimState, type ShareRow, share, shareRows, weighted } from "../../data/fairShare.ts";
import { formatTime } from "../../data/format.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { FAIR_SHARE_TEST_IDS as T } from "../../test-ids/fair-share.ts";

const LEVEL_LABEL = { organization: "Organization", project: "Project", user: "User" } as const;

const styles = css`
  td.num,
  th.num {
    text-align: right;
    font-variant-numeric: tabular-nums;
  }
  th.num {
    white-space: normal;
    min-width: 4.5rem;
  }
  td.model,
  td time {
    white-space: nowrap;
  }
  dl.when {
    display: grid;
    grid-template-columns: max-content max-content;
    gap: 0 0.5rem;
    margin: 0;
  }
  dl.when dt {
    color: var(--berth-fg-muted);
  }
  dl.when dd {
    margin: 0;
  }
  td.why {
    min-width: 14rem;
  }
  .small {
    font-size: 0.8rem;
    font-weight: normal;
  }
  tr.level-organization td {
    font-weight: 600;
    background: var(--berth-bg-subtle);
  }
  tr.level-project td.name {
    padding-left: 1.5rem;
  }
  tr.level-user td.name {
    padding-left: 2.75rem;
  }
  section + section {
    margin-top: 1.5rem;
  }
  h2 {
    font-size: 1.1rem;
  }
`;

export class BerthFairShareView extends LitElement {
  static override styles = [tokens, shared, page, styles];
  static override properties = { organization: { state: true }, pageNo: { state: true } };
  declare organization: string;
  declare pageNo: number;

  #standing = new Task(this, {
    task: async ([org], { signal }) => loadFairShare((org as string) || undefined, signal),
    args: () => [this.organization],
  });

  #reclaims = new Task(this, {
    task: async ([org, pageNo], { signal }) =>
      loadCapacityReclaims(
        { page: pageNo as number, size: 25, ...((org as string) ? { organization_id: org as string } : {}) },
        signal,
      ),
    args: () => [this.organization, this.pageNo],
  });

  /** Organizations offered by the filter: those the first, unfiltered answer showed. */
  #organizations: { id: string; name: string }[] = [];

  constructor() {
    super();
    this.organization = "";
    this.pageNo = 1;
  }

  /** Names the log's ids: organizations, projects and users the standing shows; anything else stays an id. */
  #names(): Map<string, string> {
    const names = new Map<string, string>();
    for (const o of this.#organizations) names.set(o.id, o.name);
    for (const o of this.#standing.value?.organizations ?? []) {
      names.set(o.id, o.name);
      for (const p of o.projects) {
        names.set(p.id, p.name);
        for (const u of p.users) names.set(u.id, u.name);
      }
    }
    return names;
  }

  #row(r: ShareRow) {
    const s = r.standing;
    const m = r.model;
    const w = weighted(s.weighted_share);
    return html`<tr class="level-${r.level}" data-testid=${T.row} data-level=${r.level} data-id=${r.id} data-model=${m?.gpu_model ?? ""}
      data-guaranteed=${m?.guaranteed ?? 0} data-used=${m?.used ?? 0} data-borrowed=${m?.borrowed ?? 0} data-lent=${m?.lent ?? 0}>
      <td class="name">${r.first ? html`${s.name}<br /><span class="muted small">${LEVEL_LABEL[r.level]}</span>` : nothing}</td>
      <td class="model">${m ? m.gpu_model : html`<span class="muted">none held</span>`}</td>
      <td class="num">${m ? gpus(m.guaranteed) : "—"}</td>
      <td class="num">${m ? gpus(m.used) : "—"}</td>
      <td class="num">${m ? gpus(m.borrowed) : "—"}</td>
      <td class="num">${m && r.level === "organization" ? gpus(m.lent) : "—"}</td>
      <td class="num">${r.first ? html`${share(s.fair_share)} <span class="muted small">(${s.weight})</span>` : nothing}</td>
      <td class="num">${r.first ? hours(s.decayed_usage_gpu_hours) : nothing}</td>
      <td class="num">${r.first ? share(s.usage_share) : nothing}</td>
      <td class="num">${r.first ? html`<span class="tone-${w.tone}">${w.text}</span>` : nothing}</td>
    </tr>`;
  }

  #standingTables(v: FairShare) {
    return v.organizations.map(
      (
        o,
      ) => html`<div class="table-wrap" tabindex="0" role="region" aria-label="Fair share of ${o.name}" data-testid=${T.organization} data-id=${o.id}>
        <table>
          <caption class="visually-hidden">Fair share of ${o.name}: its projects and their users per GPU model</caption>
          <thead><tr>
            <th scope="col">Scope</th><th scope="col">GPU model</th>
            <th scope="col" class="num">Guaranteed</th><th scope="col" class="num">In use</th>
            <th scope="col" class="num">Borrowed</th><th scope="col" class="num">Lent</th>
            <th scope="col" class="num">Fair share (weight)</th>
            <th scope="col" class="num">Decayed usage (GPU-h)</th><th scope="col" class="num">Usage share</th>
            <th scope="col" class="num">Usage ÷ fair</th>
          </tr></thead>
          <tbody>${shareRows(o).map((r) => this.#row(r))}</tbody>
        </table>
      </div>`,
    );
  }

  #reclaimTable(rows: CapacityReclaim[]) {
    const names = this.#names();
    const name = (id: string) => names.get(id) ?? id;
    return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Reclaims"><table data-testid=${T.reclaims}>
      <caption class="visually-hidden">Reclaims of borrowed sessions, newest first</caption>
      <thead><tr>
        <th scope="col">Reclaimed session</th><th scope="col">Owner</th><th scope="col">For session</th>
        <th scope="col">GPUs</th><th scope="col">Why</th><th scope="col">Warned, paused, resumed</th>
        <th scope="col">State</th>
      </tr></thead>
      <tbody>${rows.map((r) => {
        const st = reclaimState(r);
        return html`<tr data-testid=${T.reclaimRow} data-session=${r.session_id} data-for=${r.for_session_id} data-state=${st.text.toLowerCase()}>
          <td><a href="/sessions/${r.session_id}"><code>${r.session_id}</code></a><br /><span class="muted">${name(r.organization_id)}${r.project_id ? ` / ${name(r.project_id)}` : ""}</span></td>
          <td>${name(r.owner_id)}</td>
          <td><a href="/sessions/${r.for_session_id}"><code>${r.for_session_id}</code></a><br /><span class="muted">${name(r.for_organization_id)}</span></td>
          <td class="model">${gpus(r.gpus)} × ${r.gpu_model}</td>
          <td class="why">${r.reason}</td>
          <td><dl class="when">
            <dt>Warned</dt><dd><time datetime=${r.noticed_at}>${formatTime(r.noticed_at)}</time></dd>
            <dt>Paused</dt><dd>${r.paused_at ? html`<time datetime=${r.paused_at}>${formatTime(r.paused_at)}</time>` : html`<span class="muted">due ${formatTime(r.pause_at)}</span>`}</dd>
            <dt>Resumed</dt><dd>${r.resumed_at ? html`<time datetime=${r.resumed_at}>${formatTime(r.resumed_at)}</time>` : "—"}</dd>
          </dl></td>
          <td><span class="badge tone-${st.tone}">${st.text}</span>${r.withdrawn_at ? html`<br /><span class="muted">${formatTime(r.withdrawn_at)}</span>` : nothing}</td>
        </tr>`;
      })}</tbody>
    </table></div>`;
  }

  #filter() {
    if (this.#organizations.length < 2 && !this.organization) return nothing;
    return html`<form class="filters" role="search" @submit=${(e: Event) => e.preventDefault()}>
      <div class="field"><label for="fs-org">Organization</label>
        <select id="fs-org" data-testid=${T.organizationFilter} @change=${(e: Event) => {
          this.organization = (e.target as HTMLSelectElement).value;
          this.pageNo = 1;
        }}>
          <option value="" ?selected=${!this.organization}>All</option>
          ${this.#organizations.map((o) => html`<option value=${o.id} ?selected=${this.organization === o.id}>${o.name}</option>`)}
        </select></div>
    </form>`;
  }

  override render() {
    return html`<div class="page-head"><h1>Fair share</h1></div>
      <p class="muted">Per GPU model: what each organization and project is guaranteed, what its guaranteed sessions use,
        what its borrowed sessions hold beyond the guarantee, and what of its unused guarantee others borrow. Decayed usage
        is GPU-hours counted down with the policy's half-life; usage ÷ fair above 1 means more than its weight's share, and
        its waiting sessions go after others'. Borrowed sessions are paused (after a warning) when a guaranteed one needs the GPUs.</p>
      ${this.#filter()}
      <section aria-labelledby="fs-shares">
        <h2 id="fs-shares">Shares</h2>
        ${renderTask(this.#standing, {
          pendingLabel: "Loading the shares…",
          isEmpty: (v) => v.organizations.length === 0,
          empty: () =>
            html`<berth-empty-state heading="No organization to show">Organization administrators see their own organization here, super admins every one. Guarantees are set in an organization's resource policy (fair share).</berth-empty-state>`,
          complete: (v) => {
            if (!this.organization) this.#organizations = v.organizations.map((o) => ({ id: o.id, name: o.name }));
            const cap = Object.entries(v.capacity);
            return html`<p class="muted" data-testid=${T.capacity}>Fleet: ${cap.length ? cap.map(([m, n]) => `${gpus(n)} × ${m}`).join(", ") : "no GPUs reported"} ·
              <span data-testid=${T.asOf}>as of ${formatTime(v.as_of)}</span></p>
              ${this.#standingTables(v)}`;
          },
        })}
      </section>
      <section aria-labelledby="fs-reclaims">
        <h2 id="fs-reclaims">Reclaims</h2>
        ${renderTask(this.#reclaims, {
          pendingLabel: "Loading the reclaims…",
          isEmpty: (r) => r.data.length === 0,
          empty: () =>
            html`<berth-empty-state heading="No reclaim yet">When a guaranteed session waits while borrowed sessions hold its GPUs, the borrowed ones are warned, then paused, and listed here.</berth-empty-state>`,
          complete: (r) =>
            html`${this.#reclaimTable(r.data)}<berth-pager .page=${r.pagination.page} .size=${r.pagination.size} .total=${r.pagination.total} @berth-page-change=${(e: CustomEvent<{ page: number }>) => (this.pageNo = e.detail.page)}></berth-pager>`,
        })}
      </section>`;
  }
}
