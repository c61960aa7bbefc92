// Credits: the wallets the person may see (their own, their projects', and for admins every wallet of
// their organizations), with balance and what each can spend now; paged and filtered in the URL.
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import type { Wallet } from "../../api/openapi.gen.ts";
import { auth, router } from "../../app/context.ts";
import { meForCredits } from "../../app/credits.ts";
import { loadDirectory } from "../../app/directory.ts";
import { creditsNav } from "../../components/credits-nav.ts";
import "../../components/empty-state/index.ts";
import "../../components/pager/index.ts";
import { loadWallets } from "../../app/credits.ts";
import { renderTask } from "../../components/task-states.ts";
import {
  type Directory,
  EMPTY_DIRECTORY,
  formatCredits,
  isNegative,
  managesCredits,
  OWNER_KIND_LABEL,
  queryFromWalletsFilter,
  type WalletsFilter,
  walletName,
  walletsFilterFromQuery,
} from "../../data/credits.ts";
import { credits } from "../../styles/credits.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { CREDITS_TEST_IDS } from "../../test-ids/credits.ts";

const PAGE_SIZE = 20;

export class BerthCreditsView extends LitElement {
  static override styles = [tokens, shared, page, credits];
  static override properties = { query: { attribute: false } };
  declare query: URLSearchParams;

  #wallets = new Task(this, {
    task: async ([organization, kind, pageNo], { signal }) =>
      loadWallets(
        {
          page: pageNo as number,
          size: PAGE_SIZE,
          ...(organization ? { organization: organization as string } : {}),
          ...(kind ? { owner_kind: kind as Wallet["owner"]["kind"] } : {}),
        },
        signal,
      ),
    args: () => {
      const f = this.filter;
      return [f.organization, f.kind, f.page];
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
  }

  get filter(): WalletsFilter {
    return walletsFilterFromQuery(this.query);
  }

  #set(change: Partial<WalletsFilter>): void {
    router.navigate(`/credits${queryFromWalletsFilter({ ...this.filter, page: 1, ...change })}`, { replace: true });
  }

  #filters(d: Directory) {
    const f = this.filter;
    const kinds = Object.entries(OWNER_KIND_LABEL).filter(([k]) => k !== "system" || auth.isSuperAdmin);
    return html`<div class="filters" role="search" aria-label="Filter wallets">
      <div class="field"><label for="w-org">Organization</label>
        <select id="w-org" data-testid=${CREDITS_TEST_IDS.filterOrganization} @change=${(e: Event) => this.#set({ organization: (e.target as HTMLSelectElement).value })}>
          <option value="" ?selected=${!f.organization}>All I can see</option>
          ${[...d.organizations].map(([id, name]) => html`<option value=${id} ?selected=${f.organization === id}>${name}</option>`)}
          ${f.organization && !d.organizations.has(f.organization) ? html`<option value=${f.organization} selected>${f.organization}</option>` : nothing}
        </select></div>
      <div class="field"><label for="w-kind">Owner</label>
        <select id="w-kind" data-testid=${CREDITS_TEST_IDS.filterOwnerKind} @change=${(e: Event) => this.#set({ kind: (e.target as HTMLSelectElement).value as WalletsFilter["kind"] })}>
          <option value="" ?selected=${!f.kind}>Anyone</option>
          ${kinds.map(([k, label]) => html`<option value=${k} ?selected=${f.kind === k}>${label}</option>`)}
        </select></div>
    </div>`;
  }

  #table(rows: Wallet[], d: Directory) {
    return html`<div class="table-wrap"><table data-testid=${CREDITS_TEST_IDS.walletsTable}>
      <caption class="visually-hidden">Wallets</caption>
      <thead><tr><th scope="col">Wallet</th><th scope="col">Owner</th><th scope="col" class="hide-narrow">Organization</th>
        <th scope="col" class="num">Balance</th><th scope="col" class="num hide-narrow">Can spend now</th></tr></thead>
      <tbody>${rows.map(
        (w) => html`<tr data-testid=${CREDITS_TEST_IDS.walletRow} data-wallet-id=${w.id}>
          <td><a href="/credits/wallets/${encodeURIComponent(w.id)}" data-testid=${CREDITS_TEST_IDS.walletLink}>${walletName(w, d)}</a><br /><code class="muted">${w.id}</code></td>
          <td>${OWNER_KIND_LABEL[w.owner.kind]}</td>
          <td class="hide-narrow">${w.organization_id ? (d.organizations.get(w.organization_id) ?? w.organization_id) : "—"}</td>
          <td class="num ${isNegative(w.balance) ? "negative" : ""}" data-testid=${CREDITS_TEST_IDS.walletBalance}>${formatCredits(w.balance)}</td>
          <td class="num hide-narrow">${formatCredits(w.spendable)}</td>
        </tr>`,
      )}</tbody>
    </table></div>`;
  }

  override render() {
    const f = this.filter;
    const manager = managesCredits(meForCredits());
    const d = this.#directory.value ?? { ...EMPTY_DIRECTORY, me: auth.userId };
    return html`<div class="page-head">
        <h1>Credits</h1>
        <span class="spacer"></span>
        <a class="button" href="/credits/requests" data-testid=${CREDITS_TEST_IDS.askForCredits}>Ask for credits</a>
        ${manager ? html`<a class="button primary" href="/credits/allocations">Allocate credits</a>` : nothing}
      </div>
      ${creditsNav("wallets", manager)}
      <p class="muted">Amounts are in credits. Sessions draw from your own wallet first, then your project's, then your organization's.</p>
      ${this.#filters(d)}
      ${renderTask(this.#wallets, {
        pendingLabel: "Loading wallets…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          f.organization || f.kind || f.page > 1
            ? html`<berth-empty-state heading="No wallet matches these filters">Change or clear the filters.</berth-empty-state>`
            : html`<berth-empty-state heading="No wallet yet">A wallet opens when an administrator allocates credits to you or approves your request.
                <a slot="action" class="button primary" href="/credits/requests">Ask for credits</a></berth-empty-state>`,
        complete: (r) =>
          html`${this.#table(r.data, d)}<berth-pager .page=${r.pagination.page} .size=${r.pagination.size} .total=${r.pagination.total} @berth-page-change=${(e: CustomEvent<{ page: number }>) => this.#set({ page: e.detail.page })}></berth-pager>`,
      })}`;
  }
}
