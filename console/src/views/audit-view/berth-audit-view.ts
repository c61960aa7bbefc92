// The audit log: who did what, when, with filters (range, actor, action or prefix, resource, outcome)
// and the same filters as a CSV download. Administrators see their organizations' rows, super_admins
// all; the API decides (a member would see an empty list).
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import type { AuditLogEntry, Operations } from "../../api/openapi.gen.ts";
import "../../components/error-panel/index.ts";
import "../../components/pager/index.ts";
import { exportAuditLogs, loadAuditLogs } from "../../app/insights.ts";
import { renderTask } from "../../components/task-states.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { AUDIT_TEST_IDS } from "../../test-ids/audit.ts";

type Query = Operations["listAuditLogs"]["query"];

interface Filters {
  from: string;
  to: string;
  actor: string;
  action: string;
  resourceType: string;
  resourceId: string;
  outcome: "" | "success" | "denied" | "failed";
}

/** A datetime-local value (local time) as UTC ISO-8601; empty stays empty. */
function iso(local: string): string | undefined {
  if (!local) return undefined;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

function localInput(d: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

export function auditQuery(f: Filters): Query {
  const q: Record<string, string> = {};
  const from = iso(f.from);
  const to = iso(f.to);
  if (from) q.from = from;
  if (to) q.to = to;
  if (f.actor) q.actor = f.actor;
  if (f.action) q.action = f.action;
  if (f.resourceType) q.resource_type = f.resourceType;
  if (f.resourceId) q.resource_id = f.resourceId;
  if (f.outcome) q.outcome = f.outcome;
  return q as Query;
}

export class BerthAuditView extends LitElement {
  static override styles = [tokens, shared, page];
  static override properties = {
    filters: { state: true },
    pageNo: { state: true },
    error: { state: true },
    downloading: { state: true },
  };
  declare filters: Filters;
  declare pageNo: number;
  declare error: unknown;
  declare downloading: boolean;

  #rows = new Task(this, {
    task: async ([filters, pageNo], { signal }) =>
      loadAuditLogs({ ...auditQuery(filters as Filters), page: pageNo as number, size: 25 }, signal),
    args: () => [this.filters, this.pageNo],
  });

  constructor() {
    super();
    const now = new Date();
    this.filters = {
      from: localInput(new Date(now.getTime() - 7 * 86_400_000)),
      to: "",
      actor: "",
      action: "",
      resourceType: "",
      resourceId: "",
      outcome: "",
    };
    this.pageNo = 1;
    this.error = undefined;
    this.downloading = false;
  }

  #apply(e: SubmitEvent): void {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    const s = (k: string) => String(f.get(k) ?? "").trim();
    this.filters = {
      from: s("from"),
      to: s("to"),
      actor: s("actor"),
      action: s("action"),
      resourceType: s("resource_type"),
      resourceId: s("resource_id"),
      outcome: s("outcome") as Filters["outcome"],
    };
    this.pageNo = 1;
  }

  /** The export needs a bounded range: the form's, or up to now. Saved through a blob (the bearer token
   * cannot ride on a plain link). */
  async #download(): Promise<void> {
    this.error = undefined;
    this.downloading = true;
    try {
      const q = auditQuery(this.filters) as Record<string, string>;
      q.to ??= new Date().toISOString();
      q.from ??= new Date(Date.parse(q.to) - 30 * 86_400_000).toISOString();
      const res = await exportAuditLogs(q);
      const blob = await res.blob();
      const a = document.createElement("a");
      a.href = URL.createObjectURL(blob);
      a.download = /filename="([^"]+)"/.exec(res.headers.get("content-disposition") ?? "")?.[1] ?? "audit-log.csv";
      this.renderRoot.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    } catch (err) {
      this.error = err;
    } finally {
      this.downloading = false;
    }
  }

  #table(rows: AuditLogEntry[]) {
    return html`<div class="table-wrap"><table data-testid=${AUDIT_TEST_IDS.table}>
      <caption class="visually-hidden">Audit log entries, newest first</caption>
      <thead><tr><th scope="col">When (UTC)</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Resource</th><th scope="col">Outcome</th><th scope="col" class="hide-narrow">From</th><th scope="col" class="hide-narrow">Request</th></tr></thead>
      <tbody>${rows.map(
        (r) => html`<tr data-testid=${AUDIT_TEST_IDS.row} data-action=${r.action} data-outcome=${r.outcome}>
          <td><time datetime=${r.at}>${r.at.replace("T", " ").slice(0, 19)}</time></td>
          <td>${r.actor.kind === "system" ? html`system <span class="muted">(${r.actor.reason ?? "—"})</span>` : html`${r.actor.id ?? r.actor.kind}${r.actor.id && r.actor.kind !== "user" ? html` <span class="muted">(${r.actor.kind})</span>` : nothing}`}</td>
          <td><code>${r.action}</code></td>
          <td>${r.resource.type ? html`${r.resource.type} <span class="muted">${r.resource.id ?? ""}</span>` : "—"}</td>
          <td><span class="badge ${r.outcome === "success" ? "tone-ok" : r.outcome === "denied" ? "tone-bad" : "tone-warn"}">${r.outcome}</span>${r.status ? html` <span class="muted">${r.status}</span>` : nothing}</td>
          <td class="hide-narrow">${r.source_ip ?? "—"}</td>
          <td class="hide-narrow"><span class="muted">${r.request_id ?? ""}</span></td>
        </tr>`,
      )}</tbody>
    </table></div>`;
  }

  override render() {
    const f = this.filters;
    return html`<div class="page-head"><h1>Audit log</h1>
        <button type="button" data-testid=${AUDIT_TEST_IDS.download} ?disabled=${this.downloading} @click=${() => this.#download()}>${this.downloading ? "Preparing CSV…" : "Download CSV"}</button></div>
      <p class="muted">Every change made through Berth, and every refused attempt, newest first. The CSV holds the rows these filters select (at most a year and a million rows).</p>
      ${this.error ? html`<berth-error-panel heading="That did not work" .error=${this.error}></berth-error-panel>` : nothing}
      <form class="filters" role="search" data-testid=${AUDIT_TEST_IDS.filters} @submit=${(e: SubmitEvent) => this.#apply(e)}>
        <div class="field"><label for="a-from">From</label><input id="a-from" name="from" type="datetime-local" .value=${f.from} /></div>
        <div class="field"><label for="a-to">To</label><input id="a-to" name="to" type="datetime-local" .value=${f.to} /></div>
        <div class="field"><label for="a-actor">Actor id</label><input id="a-actor" name="actor" type="search" .value=${f.actor} /></div>
        <div class="field"><label for="a-action">Action (prefix ends in *)</label><input id="a-action" name="action" type="search" placeholder="session.*" .value=${f.action} /></div>
        <div class="field"><label for="a-rtype">Resource type</label><input id="a-rtype" name="resource_type" type="search" .value=${f.resourceType} /></div>
        <div class="field"><label for="a-rid">Resource id</label><input id="a-rid" name="resource_id" type="search" .value=${f.resourceId} /></div>
        <div class="field"><label for="a-outcome">Outcome</label><select id="a-outcome" name="outcome">
          ${(["", "success", "denied", "failed"] as const).map((o) => html`<option value=${o} ?selected=${f.outcome === o}>${o || "Any"}</option>`)}
        </select></div>
        <div class="field"><button type="submit" data-testid=${AUDIT_TEST_IDS.apply}>Apply</button></div>
      </form>
      ${renderTask(this.#rows, {
        pendingLabel: "Loading the audit log…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<berth-empty-state heading="No entry matches">Widen the range or clear a filter. Organization administrators see their organizations' entries.</berth-empty-state>`,
        complete: (r) =>
          html`<p class="muted" data-testid=${AUDIT_TEST_IDS.total}>${r.pagination.total_exact ? "" : "about "}${r.pagination.total.toLocaleString("en")} entries</p>${this.#table(r.data)}<berth-pager .page=${r.pagination.page} .size=${r.pagination.size} .total=${r.pagination.total} @berth-page-change=${(e: CustomEvent<{ page: number }>) => (this.pageNo = e.detail.page)}></berth-pager>`,
      })}`;
  }
}
