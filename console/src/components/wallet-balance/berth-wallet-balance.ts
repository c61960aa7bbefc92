// The header's balance: the person's own wallet in their organization (or the most relevant wallet they
// see), as a link to its ledger. Reloads after a movement made in this tab, every 30 s while the tab is
// visible (usage charges arrive on their own), a moment after a session changes on the event stream (a
// pause is charged to the second as the pod stops), on opening another credits page, and when the account
// changes.
import { Task, TaskStatus } from "@lit/task";
import { css, html, LitElement, nothing } from "lit";
import type { UserDetail } from "../../api/openapi.gen.ts";
import { router } from "../../app/context.ts";
import { CREDITS_CHANGED, loadHeaderWallet } from "../../app/credits.ts";
import { onSessionsChanged } from "../../app/live.ts";
import { formatCredits } from "../../data/format.ts";
import { isNegative, OWNER_KIND_LABEL } from "../../data/wallets.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { SHELL_TEST_IDS } from "../../test-ids/shell.ts";

const REFRESH_MS = 30_000;
/** After a session event: the operator's last sample of a paused pod is charged within a second or two. */
const AFTER_SESSION_EVENT_MS = 2_000;
const SHORT = { user: "Person", project: "Project", organization: "Org", system: "Platform" } as const;

export class BerthWalletBalance extends LitElement {
  static override styles = [
    tokens,
    shared,
    css`
      a {
        display: inline-flex;
        align-items: baseline;
        gap: 0.3rem;
        padding: 0.3rem 0.6rem;
        border: 1px solid var(--berth-border);
        border-radius: 999px;
        color: var(--berth-fg);
        text-decoration: none;
        font-size: 0.9rem;
        white-space: nowrap;
      }
      a:hover {
        background: var(--berth-bg-subtle);
      }
      .amount {
        font-weight: 700;
        font-variant-numeric: tabular-nums;
      }
      .amount.negative {
        color: var(--berth-danger);
      }
      .who {
        color: var(--berth-fg-muted);
        font-size: 0.8rem;
      }
      @media (max-width: 640px) {
        /* A phone's header has room for the number only; screen readers still hear the unit. */
        .unit {
          position: absolute;
          width: 1px;
          height: 1px;
          overflow: hidden;
          clip: rect(0 0 0 0);
        }
      }
    `,
  ];
  static override properties = { userId: { attribute: false }, me: { attribute: false } };
  declare userId: string | undefined;
  declare me: UserDetail | undefined;
  #reloads = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #unsubscribe: (() => void) | undefined;
  #route = router.current.route.name;

  #wallet = new Task(this, {
    task: async (_args, { signal }) => loadHeaderWallet(signal),
    // The account (and its memberships, once loaded) decides which wallet; #reloads forces a new look.
    args: () => [this.userId, this.me, this.#reloads],
  });

  constructor() {
    super();
    this.userId = undefined;
    this.me = undefined;
  }

  #reload = () => {
    this.#reloads++;
    this.requestUpdate();
  };

  /** Another credits page opened (not a filter change on the same page): show the balance as it is now. */
  #onRoute = () => {
    const name = router.current.route.name;
    if (name !== this.#route && name.startsWith("credits")) this.#reload();
    this.#route = name;
  };

  override connectedCallback(): void {
    super.connectedCallback();
    window.addEventListener(CREDITS_CHANGED, this.#reload);
    router.addEventListener("change", this.#onRoute);
    this.#timer = setInterval(() => {
      if (document.visibilityState !== "hidden") this.#reload();
    }, REFRESH_MS);
    // A session's message on the stream only: while polling every tick is a "change" (the 30 s timer is
    // enough), the stream's (re)connect carries no message, and a load under way already reads after the
    // event (restarting it would blank the header on a slow first load).
    this.#unsubscribe = onSessionsChanged((c) => {
      if (c.source === "stream" && c.message && this.#wallet.status !== TaskStatus.PENDING) this.#reload();
    }, AFTER_SESSION_EVENT_MS);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    window.removeEventListener(CREDITS_CHANGED, this.#reload);
    router.removeEventListener("change", this.#onRoute);
    clearInterval(this.#timer);
    this.#unsubscribe?.();
  }

  override render() {
    // The last value stays on screen while a reload runs; a failure points to the credits page, which
    // shows the error in full.
    return this.#wallet.render({
      initial: () => nothing,
      pending: () => (this.#wallet.value !== undefined ? this.#view() : nothing),
      complete: () => this.#view(),
      error: (e) =>
        html`<a href="/credits" data-testid=${SHELL_TEST_IDS.headerBalance} data-state="error" title=${e instanceof Error ? e.message : String(e)}>
          <span>Credits</span><span class="who">unavailable</span></a>`,
    });
  }

  #view() {
    const found = this.#wallet.value;
    if (!found)
      return html`<a href="/credits/requests" data-testid=${SHELL_TEST_IDS.headerBalance} data-units="0" title="You have no wallet yet: ask for credits">
        <span class="visually-hidden">Your balance:</span><span class="amount">0.00</span><span class="unit">credits</span></a>`;
    const w = found.wallet;
    const whose = found.own ? "Your balance" : `${w.display_name ?? OWNER_KIND_LABEL[w.owner.kind]} wallet`;
    // Not the person's own: a short tag says whose (the header is crowded at 1280 px), the title in full.
    return html`<a href="/credits/wallets/${encodeURIComponent(w.id)}" data-testid=${SHELL_TEST_IDS.headerBalance} data-units=${w.balance} data-wallet-id=${w.id} data-own=${found.own ? "true" : "false"} title="${whose}: ${formatCredits(w.balance)} credits">
      ${found.own ? html`<span class="visually-hidden">${whose}:</span>` : html`<span class="who" aria-hidden="true">${SHORT[w.owner.kind]}</span><span class="visually-hidden">${whose}:</span>`}
      <span class="amount ${isNegative(w.balance) ? "negative" : ""}">${formatCredits(w.balance)}</span><span class="unit">credits</span>
    </a>`;
  }
}
