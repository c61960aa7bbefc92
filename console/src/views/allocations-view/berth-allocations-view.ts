// Allocations: an administrator moves credits from a wallet they manage to another wallet of the same
// organization (down to a project or a person, or back up), opening the receiver's wallet when it has
// none yet; super_admins issue from the platform's wallet to organizations. Below, the movements they
// may see. The API decides who may do what; the form offers only what the rules allow.
import { Task } from "@lit/task";
import { html, LitElement, nothing } from "lit";
import { ApiError, newIdempotencyKey } from "../../api/client.ts";
import type { Allocation, Wallet } from "../../api/openapi.gen.ts";
import { auth } from "../../app/context.ts";
import { announceCreditsChanged, meForCredits } from "../../app/credits.ts";
import { loadDirectory } from "../../app/directory.ts";
import { creditsNav } from "../../components/credits-nav.ts";
import "../../components/empty-state/index.ts";
import "../../components/error-panel/index.ts";
import "../../components/pager/index.ts";
import {
  allocateCredits,
  loadAllocations,
  loadOrganizationWallets,
  loadSystemWallets,
  openWallet,
} from "../../app/credits.ts";
import { loadOrganizationMembers } from "../../app/organizations.ts";
import { renderTask } from "../../components/task-states.ts";
import {
  canManageWallet,
  creditsText,
  type Directory,
  EMPTY_DIRECTORY,
  formatCredits,
  KIND_LABEL,
  managesCredits,
  parseCredits,
  walletLine,
} from "../../data/credits.ts";
import { formatRelative, formatTime } from "../../data/format.ts";
import { IntentKey } from "../../data/intent-key.ts";
import { credits } from "../../styles/credits.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { CREDITS_TEST_IDS } from "../../test-ids/credits.ts";
import { SHELL_TEST_IDS } from "../../test-ids/shell.ts";

type OwnerKind = "user" | "project" | "organization";
/** A receiver: an existing wallet, or an owner whose wallet is opened on the way. */
type Target = { wallet: Wallet } | { open: { kind: OwnerKind; id: string; label: string } };

const targetValue = (t: Target) => ("wallet" in t ? `wallet:${t.wallet.id}` : `open:${t.open.kind}:${t.open.id}`);

export class BerthAllocationsView extends LitElement {
  static override styles = [tokens, shared, page, credits];
  static override properties = {
    query: { attribute: false },
    org: { state: true },
    from: { state: true },
    to: { state: true },
    amount: { state: true },
    amountProblem: { state: true },
    busy: { state: true },
    error: { state: true },
    notice: { state: true },
    movementsPage: { state: true },
  };
  declare query: URLSearchParams;
  declare org: string;
  declare from: string;
  declare to: string;
  declare amount: string;
  declare amountProblem: string | undefined;
  declare busy: boolean;
  declare error: unknown;
  declare notice: { text: string; walletId: string } | undefined;
  declare movementsPage: number;
  #key = new IntentKey(newIdempotencyKey);
  #seeded = false;

  #directory = new Task(this, {
    task: async ([org], { signal }) => loadDirectory({ ...(org ? { organizations: [org as string] } : {}), signal }),
    // The account's memberships decide what may be listed; a reload loads them after the page.
    args: () => [this.org, auth.me],
  });
  #wallets = new Task(this, {
    task: async ([org], { signal }): Promise<Wallet[]> => {
      if (!org) return [];
      const [inOrg, system] = await Promise.all([
        loadOrganizationWallets(org as string, signal),
        auth.isSuperAdmin ? loadSystemWallets(signal) : Promise.resolve(undefined),
      ]);
      return [...(system?.data ?? []), ...inOrg.data];
    },
    args: () => [this.#org(), auth.me],
  });
  /** The organization's members, for receivers without a wallet yet (its admins may open one). */
  #people = new Task(this, {
    task: async ([org], { signal }) => {
      if (!org || !this.#canOpen(org as string)) return [];
      try {
        return (await loadOrganizationMembers(org as string, signal)).data;
      } catch (e) {
        if (e instanceof ApiError && e.code === "forbidden") return [];
        throw e;
      }
    },
    args: () => [this.#org(), auth.me],
  });
  #movements = new Task(this, {
    task: async ([pageNo], { signal }) => loadAllocations(pageNo as number, signal),
    args: () => [this.movementsPage],
  });

  constructor() {
    super();
    this.query = new URLSearchParams();
    this.org = "";
    this.from = "";
    this.to = "";
    this.amount = "";
    this.amountProblem = undefined;
    this.busy = false;
    this.error = undefined;
    this.notice = undefined;
    this.movementsPage = 1;
  }

  override willUpdate(): void {
    // The URL's ?org=, ?from=, ?to= (links from a wallet's page) seed the form once.
    if (this.#seeded) return;
    this.#seeded = true;
    this.org = this.query.get("org") ?? "";
    const from = this.query.get("from");
    const to = this.query.get("to");
    if (from) this.from = `wallet:${from}`;
    if (to) this.to = `wallet:${to}`;
  }

  #dir(): Directory {
    return this.#directory.value ?? { ...EMPTY_DIRECTORY, me: auth.userId };
  }

  /** The chosen organization, else the first the person manages wallets in (known once names load). */
  #org(): string {
    return this.org || (this.#organizations(this.#dir())[0] ?? "");
  }

  #fromValue(payers: Wallet[]): string {
    if (this.from && payers.some((w) => `wallet:${w.id}` === this.from)) return this.from;
    return payers[0] ? `wallet:${payers[0].id}` : "";
  }

  #toValue(targets: Target[]): string {
    return targets.some((t) => targetValue(t) === this.to) ? this.to : "";
  }

  #canOpen(org: string): boolean {
    return (
      auth.isSuperAdmin ||
      (auth.me?.memberships ?? []).some((m) => m.organization_id === org && m.role === "org_admin" && !m.project_id)
    );
  }

  /** Organizations where the person manages wallets (super_admins: all they see). */
  #organizations(d: Directory): string[] {
    const ms = auth.me?.memberships ?? [];
    const ids = auth.isSuperAdmin
      ? [...d.organizations.keys()]
      : ms.filter((m) => m.role === "org_admin" || m.role === "project_admin").map((m) => m.organization_id);
    if (this.org && !ids.includes(this.org)) ids.unshift(this.org);
    return [...new Set(ids)];
  }

  #payers(wallets: Wallet[]): Wallet[] {
    const me = meForCredits();
    return wallets.filter((w) => canManageWallet(w, me));
  }

  #targets(wallets: Wallet[], d: Directory): Target[] {
    const org = this.#org();
    const fromValue = this.#fromValue(this.#payers(wallets));
    const out: Target[] = wallets
      .filter((w) => `wallet:${w.id}` !== fromValue && w.owner.kind !== "system")
      .map((wallet) => ({ wallet }));
    if (!this.#canOpen(org)) return out;
    const has = (kind: string, id: string) => wallets.some((w) => w.owner.kind === kind && w.owner.id === id);
    if (!has("organization", org))
      out.push({ open: { kind: "organization", id: org, label: `${d.organizations.get(org) ?? org} (organization)` } });
    for (const [id, o] of d.projectOrganizations)
      if (o === org && !has("project", id))
        out.push({ open: { kind: "project", id, label: `${d.projects.get(id) ?? id} (project)` } });
    for (const m of this.#people.value ?? [])
      if (!has("user", m.user_id))
        out.push({
          open: { kind: "user", id: m.user_id, label: `${m.user_id === auth.userId ? "You" : m.email} (person)` },
        });
    return out;
  }

  #swap(from: string, to: string): void {
    this.from = to;
    this.to = from;
  }

  async #submit(e: SubmitEvent, d: Directory): Promise<void> {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const reason = String(new FormData(form).get("reason") ?? "").trim();
    const parsed = parseCredits(this.amount);
    this.amountProblem = parsed.ok ? undefined : parsed.problem;
    if (!parsed.ok) {
      this.renderRoot.querySelector<HTMLInputElement>("#al-amount")?.focus();
      return;
    }
    const wallets = this.#wallets.value ?? [];
    const targets = this.#targets(wallets, d);
    const fromValue = this.#fromValue(this.#payers(wallets));
    const toValue = this.#toValue(targets);
    const from = wallets.find((w) => `wallet:${w.id}` === fromValue);
    const target = targets.find((t) => targetValue(t) === toValue);
    if (!from || !target) return;
    const org = this.#org();
    this.busy = true;
    this.error = undefined;
    this.notice = undefined;
    try {
      const to =
        "wallet" in target
          ? target.wallet
          : await openWallet({
              organization_id: org,
              owner_kind: target.open.kind,
              ...(target.open.kind === "organization" ? {} : { owner_id: target.open.id }),
            });
      const moved: Allocation = await allocateCredits(
        { from_wallet_id: from.id, to_wallet_id: to.id, amount: parsed.units, reason },
        this.#key.key,
      );
      this.#key.settle();
      this.notice = {
        text: `Moved ${creditsText(moved.amount)} from ${walletLine(from, d)} to ${"wallet" in target ? walletLine(to, d) : target.open.label}.`,
        walletId: to.id,
      };
      this.amount = "";
      form.reset();
      this.to = `wallet:${to.id}`;
      announceCreditsChanged();
      void this.#wallets.run();
      void this.#movements.run();
    } catch (err) {
      this.#key.settle(err);
      this.error = err;
    } finally {
      this.busy = false;
    }
  }

  #form(wallets: Wallet[], d: Directory) {
    const org = this.#org();
    const orgs = this.#organizations(d);
    const payers = this.#payers(wallets);
    const targets = this.#targets(wallets, d);
    const fromValue = this.#fromValue(payers);
    const toValue = this.#toValue(targets);
    const from = payers.find((w) => `wallet:${w.id}` === fromValue);
    const toWallet = targets.find((t) => targetValue(t) === toValue);
    const canSwap = !!from && !!toWallet && "wallet" in toWallet && payers.some((w) => w.id === toWallet.wallet.id);
    return html`<section class="card" aria-labelledby="al-h">
      <h2 id="al-h">Move credits</h2>
      <form @submit=${(e: SubmitEvent) => this.#submit(e, d)} data-testid=${CREDITS_TEST_IDS.allocateForm} novalidate>
        <div class="form-grid">
          <div class="field wide" style="max-width:24rem"><label for="al-org">Organization</label>
            <select id="al-org" data-testid=${CREDITS_TEST_IDS.allocateOrganization} @change=${(e: Event) => {
              this.org = (e.target as HTMLSelectElement).value;
              this.from = "";
              this.to = "";
            }}>
              ${orgs.map((id) => html`<option value=${id} ?selected=${id === org}>${d.organizations.get(id) ?? id}</option>`)}
            </select></div>
          <div class="field"><label for="al-from">From (a wallet you manage)</label>
            <select id="al-from" data-testid=${CREDITS_TEST_IDS.allocateFrom} aria-describedby="al-from-hint" required @change=${(e: Event) => (this.from = (e.target as HTMLSelectElement).value)}>
              ${payers.length === 0 ? html`<option value="">No wallet you manage here</option>` : nothing}
              ${payers.map((w) => html`<option value="wallet:${w.id}" ?selected=${fromValue === `wallet:${w.id}`}>${walletLine(w, d)}</option>`)}
            </select>
            <p class="hint" id="al-from-hint" data-testid=${CREDITS_TEST_IDS.allocateFromSpendable}>${from ? `Can spend now: ${creditsText(from.spendable)}` : "Pick the paying wallet."}</p></div>
          <div class="field"><label for="al-to">To</label>
            <select id="al-to" data-testid=${CREDITS_TEST_IDS.allocateTo} required @change=${(e: Event) => (this.to = (e.target as HTMLSelectElement).value)}>
              <option value="" ?selected=${!toValue}>Choose who receives…</option>
              ${targets.map((t) => html`<option value=${targetValue(t)} ?selected=${toValue === targetValue(t)}>${"wallet" in t ? `${walletLine(t.wallet, d)} · ${formatCredits(t.wallet.balance)}` : `${t.open.label} · no wallet yet`}</option>`)}
            </select>
            <p class="hint">A person or project without a wallet gets one.</p></div>
          <div class="field"><label for="al-amount">Amount (credits)</label>
            <input id="al-amount" inputmode="decimal" autocomplete="off" required data-testid=${CREDITS_TEST_IDS.allocateAmount}
              aria-describedby="al-amount-hint${this.amountProblem ? " al-amount-problem" : ""}" aria-invalid=${this.amountProblem ? "true" : "false"}
              .value=${this.amount} @input=${(e: Event) => {
                this.amount = (e.target as HTMLInputElement).value;
                this.amountProblem = undefined;
              }} />
            <p class="hint" id="al-amount-hint">Such as 25 or 12.5.</p>
            ${this.amountProblem ? html`<p class="problem" id="al-amount-problem">${this.amountProblem}</p>` : nothing}</div>
          <div class="field wide"><label for="al-reason">Reason</label>
            <input id="al-reason" name="reason" required maxlength="1000" data-testid=${CREDITS_TEST_IDS.allocateReason} aria-describedby="al-reason-hint" />
            <p class="hint" id="al-reason-hint">Shown in both wallets' ledgers.</p></div>
        </div>
        ${this.error ? html`<berth-error-panel heading="The credits did not move" .error=${this.error}></berth-error-panel>` : nothing}
        <div class="actions">
          <button class="primary" type="submit" data-testid=${CREDITS_TEST_IDS.allocateSubmit} ?disabled=${this.busy || !from || !toValue}>${this.busy ? "Moving…" : "Move credits"}</button>
          <button type="button" @click=${() => this.#swap(fromValue, toValue)} ?disabled=${!canSwap} data-testid=${CREDITS_TEST_IDS.allocateSwap} aria-describedby="al-swap-hint">Swap from and to</button>
          <span class="hint" id="al-swap-hint">To take credits back, swap: the receiver pays.</span>
        </div>
      </form>
    </section>`;
  }

  #movementsTable(rows: Allocation[], wallets: Wallet[], d: Directory) {
    const name = (id: string | null) => {
      if (!id) return "—";
      const w = wallets.find((x) => x.id === id);
      return w
        ? html`<a href="/credits/wallets/${encodeURIComponent(id)}">${walletLine(w, d)}</a>`
        : html`<a href="/credits/wallets/${encodeURIComponent(id)}"><code>${id}</code></a>`;
    };
    return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Credit movements"><table data-testid=${CREDITS_TEST_IDS.movementsTable}>
      <caption class="visually-hidden">Credit movements, newest first</caption>
      <thead><tr><th scope="col">When</th><th scope="col">Kind</th><th scope="col">From</th><th scope="col">To</th>
        <th scope="col" class="num">Amount</th><th scope="col">Reason</th><th scope="col" class="hide-narrow">By</th></tr></thead>
      <tbody>${rows.map(
        (m) => html`<tr data-testid=${CREDITS_TEST_IDS.movementRow} data-kind=${m.kind}>
          <td><span title=${formatTime(m.at)}>${formatRelative(m.at)}</span></td>
          <td>${KIND_LABEL[m.kind]}</td>
          <td>${name(m.from_wallet_id)}</td>
          <td>${name(m.to_wallet_id)}</td>
          <td class="num" data-testid=${CREDITS_TEST_IDS.movementAmount}>${formatCredits(m.amount)}</td>
          <td class="reason">${m.reason ?? ""}</td>
          <td class="hide-narrow">${m.actor.id ? (m.actor.id === auth.userId ? "You" : (d.users.get(m.actor.id) ?? m.actor.id)) : m.actor.kind}</td>
        </tr>`,
      )}</tbody>
    </table></div>`;
  }

  override render() {
    const manager = managesCredits(meForCredits());
    const d = this.#dir();
    const wallets = this.#wallets.value ?? [];
    return html`<div class="page-head"><h1>Allocations</h1></div>
      ${creditsNav("allocations", manager)}
      ${
        this.notice
          ? html`<p class="success" role="status" data-testid=${SHELL_TEST_IDS.notice}>${this.notice.text}
              <a href="/credits/wallets/${encodeURIComponent(this.notice.walletId)}">See the receiving wallet</a></p>`
          : nothing
      }
      ${
        !manager && auth.me
          ? html`<berth-empty-state heading="You manage no wallet">Organization and project administrators move credits here. Ask for credits instead.
              <a slot="action" class="button primary" href="/credits/requests">Ask for credits</a></berth-empty-state>`
          : this.#org()
            ? renderTask(this.#wallets, {
                pendingLabel: "Loading wallets…",
                errorHeading: "The organization's wallets could not be loaded",
                complete: (ws) => this.#form(ws, d),
              })
            : html`<berth-empty-state heading="No organization to allocate in">Credits move between wallets of one organization you administer.</berth-empty-state>`
      }
      <h2>Recent movements</h2>
      ${renderTask(this.#movements, {
        pendingLabel: "Loading movements…",
        isEmpty: (r) => r.data.length === 0,
        empty: () =>
          html`<berth-empty-state heading="No movement yet">Grants, allocations, approved requests and refills show here.</berth-empty-state>`,
        complete: (r) =>
          html`${this.#movementsTable(r.data, wallets, d)}<berth-pager .page=${r.pagination.page} .size=${r.pagination.size} .total=${r.pagination.total} @berth-page-change=${(e: CustomEvent<{ page: number }>) => (this.movementsPage = e.detail.page)}></berth-pager>`,
      })}`;
  }
}
