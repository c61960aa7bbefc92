// The landing page. Everyone: their running and paused sessions, GPU-hours and credits this month, their
// balance and how long it lasts, and their GPUs' utilisation. Administrators: sessions by phase, the
// queue and spend of what they administer; super_admins also the fleet by cluster and model (with
// allocated-but-idle GPUs), troubled nodes, the storage tile and fleet charts. Tiles come from
// GET /api/v1/dashboard (Berth's own records: they render while the metrics server is down); charts from
// the monitoring panels, refreshed live.
import { Task } from "@lit/task";
import { css, html, LitElement, nothing } from "lit";
import type { Dashboard } from "../../api/openapi.gen.ts";
import { onSessionsChanged } from "../../app/live.ts";
import "../../components/monitoring-panel/index.ts";
import { loadDashboard } from "../../app/insights.ts";
import type { PanelRange } from "../../components/monitoring-panel/index.ts";
import { renderTask } from "../../components/task-states.ts";
import { formatCredits, formatDuration, formatRelative } from "../../data/format.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { DASHBOARD_TEST_IDS } from "../../test-ids/dashboard.ts";

const RANGES: [PanelRange, string][] = [
  ["1h", "Last hour"],
  ["6h", "Last 6 hours"],
  ["24h", "Last 24 hours"],
  ["7d", "Last 7 days"],
  ["30d", "Last 30 days"],
];

export class BerthDashboardView extends LitElement {
  static override styles = [
    tokens,
    shared,
    page,
    css`
      .tiles {
        display: grid;
        grid-template-columns: repeat(auto-fit, minmax(11rem, 1fr));
        gap: 0.75rem;
        margin: 0 0 1rem;
        padding: 0;
      }
      .tile {
        border: 1px solid var(--berth-border);
        border-radius: var(--berth-radius);
        background: var(--berth-bg);
        padding: 0.75rem 1rem;
        margin: 0;
      }
      .tile dt {
        font-size: 0.8125rem;
        color: var(--berth-fg-muted);
      }
      .tile dd {
        margin: 0.25rem 0 0;
        font-size: 1.375rem;
        font-weight: 600;
      }
      .tile dd small {
        display: block;
        font-size: 0.8125rem;
        font-weight: 400;
        color: var(--berth-fg-muted);
      }
      .charts {
        display: grid;
        grid-template-columns: repeat(auto-fit, minmax(22rem, 1fr));
        gap: 1rem;
        margin-bottom: 1rem;
      }
      h2 {
        font-size: 1.125rem;
        margin: 1.5rem 0 0.5rem;
      }
      .num {
        text-align: right;
        font-variant-numeric: tabular-nums;
      }
      .idle {
        color: var(--berth-warn);
        font-weight: 600;
      }
    `,
  ];
  static override properties = {
    range: { state: true },
    cluster: { state: true },
  };
  declare range: PanelRange;
  declare cluster: string;
  #unsubscribe: (() => void) | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;

  #summary = new Task(this, {
    task: async ([cluster], { signal }) => loadDashboard((cluster as string) || undefined, signal),
    args: () => [this.cluster],
  });

  constructor() {
    super();
    this.range = "1h";
    this.cluster = "";
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.#unsubscribe = onSessionsChanged(() => void this.#summary.run());
    this.#timer = setInterval(() => {
      if (document.visibilityState === "visible") void this.#summary.run();
    }, 30_000);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#unsubscribe?.();
    clearInterval(this.#timer);
  }

  #me(d: Dashboard) {
    const me = d.me;
    const sessionList = (rows: Dashboard["me"]["running"], what: string) =>
      rows.length === 0
        ? html`<p class="muted">No ${what} sessions.</p>`
        : html`<ul data-testid=${DASHBOARD_TEST_IDS.list(what)}>${rows.map(
            (s) =>
              html`<li><a href="/sessions/${encodeURIComponent(s.id)}">${s.name ?? s.id}</a> · ${s.gpu_count} × ${s.gpu_model}${s.since ? html` · ${what} ${formatRelative(s.since)}` : nothing}</li>`,
          )}</ul>`;
    return html`<dl class="tiles" data-testid=${DASHBOARD_TEST_IDS.me}>
        <div class="tile"><dt>Running sessions</dt><dd data-testid=${DASHBOARD_TEST_IDS.tileRunning}>${me.running.length}</dd></div>
        <div class="tile"><dt>Paused sessions</dt><dd data-testid=${DASHBOARD_TEST_IDS.tilePaused}>${me.paused.length}</dd></div>
        <div class="tile"><dt>GPU-hours this month</dt><dd data-testid=${DASHBOARD_TEST_IDS.tileGpuHours}>${me.period.gpu_hours.toFixed(1)}</dd></div>
        <div class="tile"><dt>Credits spent this month</dt><dd data-testid=${DASHBOARD_TEST_IDS.tileSpent}>${formatCredits(me.period.credits_spent)}</dd></div>
        <div class="tile"><dt>Your balance</dt><dd data-testid=${DASHBOARD_TEST_IDS.tileBalance}>${formatCredits(me.balance)}<small>${
          me.days_left === null
            ? "nothing running draws on it"
            : html`lasts ${formatDuration(Math.round(me.days_left * 86_400))} at ${formatCredits(me.hourly_rate)}/h`
        }</small></dd></div>
      </dl>
      <div class="grid2">
        <section class="card"><h2>Running</h2>${sessionList(me.running, "running")}</section>
        <section class="card"><h2>Paused</h2>${sessionList(me.paused, "paused")}</section>
      </div>`;
  }

  #admin(d: Dashboard) {
    const a = d.admin;
    if (!a) return nothing;
    return html`<h2>What you administer</h2>
      <dl class="tiles" data-testid=${DASHBOARD_TEST_IDS.admin}>
        <div class="tile"><dt>Queued</dt><dd data-testid=${DASHBOARD_TEST_IDS.tileQueue}>${a.queue.depth}<small>${
          a.queue.oldest_wait_seconds === null
            ? "nobody waits"
            : html`oldest waits ${formatDuration(a.queue.oldest_wait_seconds)}`
        }</small></dd></div>
        ${a.sessions_by_phase.map((p) => html`<div class="tile"><dt>${p.phase}</dt><dd>${p.count}</dd></div>`)}
        ${
          a.nodes
            ? html`<div class="tile"><dt>Nodes cordoned / not ready</dt><dd data-testid=${DASHBOARD_TEST_IDS.tileNodes}>${a.nodes.cordoned} / ${a.nodes.not_ready}</dd></div>`
            : nothing
        }
        ${a.storage ? this.#storage(a.storage) : nothing}
      </dl>
      ${a.fleet ? this.#fleet(a.fleet) : nothing}
      <section class="card"><h2>Spend this month by organization and project</h2>
        ${
          a.spend.length === 0
            ? html`<p class="muted">Nothing charged yet this month.</p>`
            : html`<div class="table-wrap"><table data-testid=${DASHBOARD_TEST_IDS.spend}>
              <caption class="visually-hidden">Credits spent this month</caption>
              <thead><tr><th scope="col">Organization</th><th scope="col">Project</th><th scope="col" class="num">GPU-hours</th><th scope="col" class="num">Credits</th></tr></thead>
              <tbody>${a.spend.map(
                (s) =>
                  html`<tr><td title=${s.organization_id}>${s.organization_name ?? s.organization_id}</td><td title=${s.project_id ?? nothing}>${s.project_id ? (s.project_name ?? s.project_id) : "—"}</td><td class="num">${s.gpu_hours.toFixed(1)}</td><td class="num">${formatCredits(s.spent)}</td></tr>`,
              )}</tbody></table></div>`
        }
      </section>`;
  }

  #storage(s: NonNullable<NonNullable<Dashboard["admin"]>["storage"]>) {
    const label = s.shared_across_clusters ? "Storage (shared across clusters)" : "Storage (largest pool)";
    if (s.status !== "ok" || s.available_gb === null)
      return html`<div class="tile" data-testid=${DASHBOARD_TEST_IDS.tileStorage}><dt>${label}</dt><dd>—<small>${
        s.status === "no_pools"
          ? "no storage pool yet"
          : s.status === "unavailable"
            ? "pools cannot be read now"
            : "capacity unknown"
      }</small></dd></div>`;
    return html`<div class="tile" data-testid=${DASHBOARD_TEST_IDS.tileStorage}><dt>${label}</dt><dd>${Math.round(s.available_gb)} GB free<small>of ${Math.round(s.total_gb ?? 0)} GB in ${s.pool} (${s.source})${
      s.pools > 1 ? `; ${s.pools} pools, never added together` : ""
    }</small></dd></div>`;
  }

  #fleet(rows: NonNullable<NonNullable<Dashboard["admin"]>["fleet"]>) {
    return html`<section class="card"><h2>GPUs by cluster and model</h2>
      <div class="table-wrap"><table data-testid=${DASHBOARD_TEST_IDS.fleet}>
        <caption class="visually-hidden">GPUs by cluster and model</caption>
        <thead><tr><th scope="col">Cluster</th><th scope="col">Model</th><th scope="col" class="num">Total</th><th scope="col" class="num">Allocated</th><th scope="col" class="num">Free</th><th scope="col" class="num">Allocated but idle</th></tr></thead>
        <tbody>${rows.map(
          (r) =>
            html`<tr data-testid=${DASHBOARD_TEST_IDS.fleetRow}><td><a href="/admin/clusters/${encodeURIComponent(r.cluster_id)}">${r.cluster_name}</a></td><td>${r.gpu_model}</td><td class="num">${r.total}</td><td class="num">${r.allocated}</td><td class="num">${r.free}</td><td class="num ${r.allocated_idle > 0 ? "idle" : ""}">${r.allocated_idle}</td></tr>`,
        )}</tbody>
      </table></div>
      <p class="muted">Idle: allocated GPUs whose sessions averaged under 5 % utilisation over the last 15 minutes.</p>
    </section>`;
  }

  #charts(d: Dashboard | undefined) {
    const scope = this.cluster ? { cluster: this.cluster } : {};
    const superAdmin = d?.view === "super_admin";
    // The charts are narrowed to what the role reaches (docs/dev/monitoring.md, "Who sees which series"):
    // the heading says whose GPUs they are.
    const [heading, whose] = superAdmin
      ? ["Fleet", "Every cluster's GPUs."]
      : d?.view === "admin"
        ? ["Your organizations' GPUs", "The GPUs of your organizations' sessions, by cluster."]
        : ["Your sessions' GPUs", "The GPUs your own sessions hold, by cluster; not the rest of the fleet."];
    return html`<h2>${heading}</h2>
      <p class="muted" data-testid=${DASHBOARD_TEST_IDS.chartsScope}>${whose}</p>
      <div class="filters">
        <div class="field"><label for="d-range">Range</label>
          <select id="d-range" @change=${(e: Event) => (this.range = (e.target as HTMLSelectElement).value as PanelRange)}>
            ${RANGES.map(([v, l]) => html`<option value=${v} ?selected=${v === this.range}>${l}</option>`)}
          </select></div>
        ${
          superAdmin && d?.admin?.fleet
            ? html`<div class="field"><label for="d-cluster">Cluster</label>
              <select id="d-cluster" @change=${(e: Event) => (this.cluster = (e.target as HTMLSelectElement).value)}>
                <option value="">All clusters</option>
                ${[...new Map(d.admin.fleet.map((f) => [f.cluster_id, f.cluster_name]))].map(
                  ([id, name]) => html`<option value=${id} ?selected=${id === this.cluster}>${name}</option>`,
                )}
              </select></div>`
            : nothing
        }
      </div>
      <div class="charts">
        <berth-monitoring-panel panel="fleet.gpu_utilization" heading="GPU utilisation by cluster" .scope=${scope} .range=${this.range}></berth-monitoring-panel>
        <berth-monitoring-panel panel="fleet.gpu_memory_used" heading="GPU memory used by cluster" .scope=${scope} .range=${this.range}></berth-monitoring-panel>
      </div>`;
  }

  override render() {
    return html`<div class="page-head"><h1>Dashboard</h1></div>
      ${renderTask(this.#summary, {
        pendingLabel: "Loading your dashboard…",
        complete: (d) => html`${this.#me(d)}${this.#charts(d)}${this.#admin(d)}`,
      })}
`;
  }
}
