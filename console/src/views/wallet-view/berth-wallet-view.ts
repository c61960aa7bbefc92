// One wallet: its balance, what it can spend now, its limits and owner, and its ledger (newest first,
// with the balance after each line; filtered by kind and by days, in the URL; paged) with a CSV export of
// the same lines from the API's export.
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import type { LedgerLine, Wallet } from "../../api/openapi.gen.ts";
import { auth, router } from "../../app/context.ts";
import { meForCredits } from "../../app/credits.ts";
import { loadDirectory } from "../../app/directory.ts";
import { creditsNav } from "../../components/credits-nav.ts";
import "../../components/empty-state/index.ts";
import "../../components/error-panel/index.ts";
import "../../components/pager/index.ts";
import { exportWalletLedger, loadWallet, loadWalletLedger } from "../../app/credits.ts";
import { renderTask } from "../../components/task-states.ts";
import {
  canManageWallet,
  type Directory,
  EMPTY_DIRECTORY,
  formatCredits,
  formatSignedCredits,
  isNegative,
  KIND_LABEL,
  LEDGER_KINDS,
  type LedgerFilter,
  ledgerDetail,
  ledgerFilterFromQuery,
  ledgerQuery,
  managesCredits,
  OWNER_KIND_LABEL,
  queryFromLedgerFilter,
  walletName,
  walletTitle,
} from "../../data/credits.ts";
import { formatRelative, formatTime } from "../../data/format.ts";
import { credits } from "../../styles/credits.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { CREDITS_TEST_IDS } from "../../test-ids/credits.ts";

const PAGE_SIZE = 25;

export class BerthWalletView extends LitElement {
  static override styles = [tokens, shared, page, credits];
  static override properties = {
    walletId: { type: String },
    query: { attribute: false },
    exporting: { state: true },
    exportError: { state: true },
  };
  declare walletId: string;
  declare query: URLSearchParams;
  declare exporting: boolean;
  declare exportError: unknown;

  #wallet = new Task(this, {
    task: async ([id], { signal }) => loadWallet(id as string, signal),
    args: () => [this.walletId],
  });
  #ledger = new Task(this, {
    task: async ([id, kind, from, to, pageNo], { signal }) =>
      loadWalletLedger(
        id as string,
        {
          page: pageNo as number,
          size: PAGE_SIZE,
          ...ledgerQuery({ kind: kind as LedgerFilter["kind"], from: from as string, to: to as string, page: 1 }),
        },
        signal,
      ),
    args: () => {
      const f = this.filter;
      return [this.walletId, f.kind, f.from, f.to, f.page];
    },
  });
  #directory = new Task(this, {
    task: async ([org], { signal }) => loadDirectory({ organizations: org ? [org as string] : [], signal }),
    args: () => [this.#wallet.value?.organization_id ?? "", auth.me],
  });

  constructor() {
    super();
    this.walletId = "";
    this.query = new URLSearchParams();
    this.exporting = false;
    this.exportError = undefined;
  }

  get filter(): LedgerFilter {
    return ledgerFilterFromQuery(this.query);
  }

  #set(change: Partial<LedgerFilter>): void {
    const q = queryFromLedgerFilter({ ...this.filter, page: 1, ...change });
    router.navigate(`/credits/wallets/${encodeURIComponent(this.walletId)}${q}`, { replace: true });
  }

  /** The API's CSV of the lines the filters select (all pages), saved as a file. */
  async #export(): Promise<void> {
    this.exporting = true;
    this.exportError = undefined;
    try {
      const res = await exportWalletLedger(this.walletId, ledgerQuery({ ...this.filter, page: 1 }));
      const blob = await res.blob();
      const name = /filename="([^"]+)"/.exec(res.headers.get("Content-Disposition") ?? "")?.[1];
      const a = document.createElement("a");
      a.href = URL.createObjectURL(blob);
      a.download = name ?? `ledger-${this.walletId}.csv`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    } catch (e) {
      this.exportError = e;
    } finally {
      this.exporting = false;
    }
  }

  #facts(w: Wallet, d: Directory) {
    const org = w.organization_id ? (d.organizations.get(w.organization_id) ?? w.organization_id) : "—";
    const me = meForCredits();
    const mine =
      (w.owner.kind === "user" && w.owner.id === auth.userId) ||
      (w.owner.kind === "project" && me.memberships.some((m) => m.project_id === w.owner.id));
    const manage = canManageWallet(w, me) && w.organization_id !== null;
    const orgQ = w.organization_id ? `org=${encodeURIComponent(w.organization_id)}&` : "";
    return html`<section class="card" aria-labelledby="balance-h">
      <h2 id="balance-h" class="visually-hidden">Balance</h2>
      <div class="grid2">
        <div>
          <p class="muted" style="margin:0">Balance</p>
          <p class="balance-big ${isNegative(w.balance) ? "negative" : ""}" data-testid=${CREDITS_TEST_IDS.walletBalance} data-units=${w.balance}>${formatCredits(w.balance)} <span class="muted" style="font-size:1rem;font-weight:400">credits</span></p>
          <p class="muted" style="margin:0.25rem 0 0">Can spend now: <strong data-testid=${CREDITS_TEST_IDS.walletSpendable}>${formatCredits(w.spendable)}</strong></p>
        </div>
        <dl class="facts">
          <dt>Owner</dt><dd>${walletName(w, d)} <span class="muted">(${OWNER_KIND_LABEL[w.owner.kind].toLowerCase()})</span></dd>
          <dt>Organization</dt><dd>${org}</dd>
          <dt>Overdraft</dt><dd>${BigInt(w.limits.overdraft) > 0n ? `${formatCredits(w.limits.overdraft)} credits below zero` : "none"}</dd>
          ${w.limits.max_spend_per_day ? html`<dt>Spend per day</dt><dd>at most ${formatCredits(w.limits.max_spend_per_day)}</dd>` : nothing}
          ${w.limits.max_spend_per_month ? html`<dt>Spend per month</dt><dd>at most ${formatCredits(w.limits.max_spend_per_month)}</dd>` : nothing}
          <dt>Wallet id</dt><dd><code>${w.id}</code></dd>
          ${w.resource ? html`<dt>Resource</dt><dd><code>kubectl -n ${w.resource.namespace} get wallet ${w.resource.name}</code></dd>` : nothing}
        </dl>
      </div>
      <div class="actions" style="margin-top:0.75rem">
        ${
          mine && w.organization_id
            ? html`<a class="button" href="/credits/requests?${orgQ}${w.owner.kind === "project" ? `project=${encodeURIComponent(w.owner.id)}` : ""}" data-testid=${CREDITS_TEST_IDS.walletAsk}>Ask for credits</a>`
            : nothing
        }
        ${
          manage
            ? html`<a class="button" href="/credits/allocations?${orgQ}from=${encodeURIComponent(w.id)}">Allocate from this wallet</a>
              <a class="button" href="/credits/allocations?${orgQ}to=${encodeURIComponent(w.id)}">Allocate to this wallet</a>`
            : nothing
        }
      </div>
    </section>`;
  }

  #filters() {
    const f = this.filter;
    return html`<div class="filters" role="search" aria-label="Filter the ledger">
      <div class="field"><label for="l-kind">Kind</label>
        <select id="l-kind" data-testid=${CREDITS_TEST_IDS.ledgerKind} @change=${(e: Event) => this.#set({ kind: (e.target as HTMLSelectElement).value as LedgerFilter["kind"] })}>
          <option value="" ?selected=${!f.kind}>Every kind</option>
          ${LEDGER_KINDS.map((k) => html`<option value=${k} ?selected=${f.kind === k}>${KIND_LABEL[k]}</option>`)}
        </select></div>
      <div class="field"><label for="l-from">From (day)</label>
        <input id="l-from" type="date" data-testid=${CREDITS_TEST_IDS.ledgerFrom} .value=${f.from} max=${f.to || nothing} @change=${(e: Event) => this.#set({ from: (e.target as HTMLInputElement).value })} /></div>
      <div class="field"><label for="l-to">Until (day, included)</label>
        <input id="l-to" type="date" data-testid=${CREDITS_TEST_IDS.ledgerTo} .value=${f.to} min=${f.from || nothing} @change=${(e: Event) => this.#set({ to: (e.target as HTMLInputElement).value })} /></div>
      ${f.kind || f.from || f.to ? html`<button type="button" @click=${() => this.#set({ kind: "", from: "", to: "" })}>Clear filters</button>` : nothing}
      <span class="spacer"></span>
      <button type="button" data-testid=${CREDITS_TEST_IDS.ledgerExport} ?disabled=${this.exporting} @click=${this.#export}>${this.exporting ? "Preparing CSV…" : "Download CSV"}</button>
    </div>`;
  }

  #table(rows: LedgerLine[]) {
    // Focusable: at a phone's width the table scrolls sideways, and its rows have no link to reach.
    return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Ledger"><table data-testid=${CREDITS_TEST_IDS.ledgerTable}>
      <caption class="visually-hidden">Ledger, newest first</caption>
      <thead><tr><th scope="col">When</th><th scope="col">Kind</th><th scope="col" class="num">Amount</th>
        <th scope="col" class="num">Balance after</th><th scope="col">Details</th></tr></thead>
      <tbody>${rows.map((l) => {
        const v = BigInt(l.amount);
        return html`<tr data-testid=${CREDITS_TEST_IDS.ledgerRow} data-kind=${l.kind} data-sequence=${l.sequence}>
          <td><span title=${formatTime(l.at)}>${formatRelative(l.at)}</span><br /><span class="muted">#${l.sequence}</span></td>
          <td>${KIND_LABEL[l.kind]}</td>
          <td class="num ${v < 0n ? "negative" : v > 0n ? "positive" : ""}" data-testid=${CREDITS_TEST_IDS.ledgerAmount}>${formatSignedCredits(l.amount)}</td>
          <td class="num ${isNegative(l.balance_after) ? "negative" : ""}" data-testid=${CREDITS_TEST_IDS.ledgerBalanceAfter}>${formatCredits(l.balance_after)}</td>
          <td class="reason">${ledgerDetail(l)}
            ${l.session_id ? html`<br /><a href="/sessions/${encodeURIComponent(l.session_id)}">Session ${l.session_id}</a>` : nothing}
            ${l.request_id ? html`<br /><span class="muted">Request id <code>${l.request_id}</code></span>` : nothing}
          </td>
        </tr>`;
      })}</tbody>
    </table></div>`;
  }

  override render() {
    const f = this.filter;
    const d = this.#directory.value ?? { ...EMPTY_DIRECTORY, me: auth.userId };
    const w = this.#wallet.value;
    return html`<p><a href="/credits">← Credits</a></p>
      <div class="page-head"><h1 data-testid=${CREDITS_TEST_IDS.walletName}>${w ? walletTitle(w, d) : "Wallet"}</h1></div>
      ${creditsNav("wallets", managesCredits(meForCredits()))}
      ${renderTask(this.#wallet, {
        pendingLabel: "Loading the wallet…",
        errorHeading: "This wallet could not be loaded",
        complete: (wallet) => this.#facts(wallet, d),
      })}
      <h2>Ledger</h2>
      ${this.#filters()}
      ${this.exportError ? html`<berth-error-panel heading="The CSV could not be downloaded" .error=${this.exportError}></berth-error-panel>` : nothing}
      ${renderTask(this.#ledger, {
        pendingLabel: "Loading the ledger…",
        errorHeading: "The ledger could not be loaded",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          f.kind || f.from || f.to || f.page > 1
            ? html`<berth-empty-state heading="No line matches these filters">Change or clear the filters.</berth-empty-state>`
            : html`<berth-empty-state heading="No movement yet">Credits arrive by allocation, an approved request or a refill; sessions' usage is charged here.</berth-empty-state>`,
        complete: (r) =>
          html`${this.#table(r.data)}<berth-pager .page=${r.pagination.page} .size=${r.pagination.size} .total=${r.pagination.total} @berth-page-change=${(e: CustomEvent<{ page: number }>) => this.#set({ page: e.detail.page })}></berth-pager>`,
      })}`;
  }
}
