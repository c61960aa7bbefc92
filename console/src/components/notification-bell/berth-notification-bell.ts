// The bell: the unread count, updated live (a `notification.created` on the session event stream, or a
// poll tick when the stream is down), and a panel with the newest notifications, each marked read when
// opened; "mark all read" and dismiss.
import { css, html, LitElement, nothing } from "lit";
import type { LiveChange, LiveFeed } from "../../api/live-feed.ts";
import type { Notification } from "../../api/openapi.gen.ts";
import {
  dismissNotification,
  loadNotifications,
  readAllNotifications,
  readNotification,
} from "../../app/notifications.ts";
import { formatRelative } from "../../data/format.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { SHELL_TEST_IDS } from "../../test-ids/shell.ts";

export class BerthNotificationBell extends LitElement {
  static override styles = [
    tokens,
    shared,
    css`
      :host {
        position: relative;
        display: inline-block;
      }
      .bell {
        position: relative;
        padding: 0.25rem 0.5rem;
      }
      .count {
        position: absolute;
        top: -0.35rem;
        right: -0.35rem;
        min-width: 1.1rem;
        padding: 0 0.3rem;
        border-radius: 999px;
        background: var(--berth-danger);
        color: var(--berth-bg);
        font-size: 0.75rem;
        line-height: 1.1rem;
        text-align: center;
      }
      .panel {
        position: absolute;
        right: 0;
        top: calc(100% + 0.4rem);
        width: min(24rem, 90vw);
        max-height: 70vh;
        overflow: auto;
        z-index: 20;
        background: var(--berth-bg);
        color: var(--berth-fg);
        border: 1px solid var(--berth-border);
        border-radius: 0.5rem;
        box-shadow: 0 8px 24px rgb(0 0 0 / 0.15);
        padding: 0.5rem;
      }
      .settings {
        margin: 0.5rem 0.25rem 0.25rem;
        text-align: right;
      }
      .head {
        display: flex;
        justify-content: space-between;
        align-items: center;
        gap: 0.5rem;
        padding: 0.25rem 0.25rem 0.5rem;
      }
      ul {
        list-style: none;
        margin: 0;
        padding: 0;
      }
      li {
        border-top: 1px solid var(--berth-border);
        padding: 0.5rem 0.25rem;
      }
      li[data-unread] .title {
        font-weight: 600;
      }
      .title {
        display: block;
      }
      @media (max-width: 640px) {
        .panel {
          position: fixed;
          left: 0.5rem;
          right: 0.5rem;
          top: 3.25rem;
          width: auto;
        }
      }
      .row {
        display: flex;
        gap: 0.5rem;
        align-items: center;
        justify-content: space-between;
      }
    `,
  ];
  static override properties = {
    feed: { attribute: false },
    unread: { state: true },
    items: { state: true },
    open: { state: true },
  };
  declare feed: LiveFeed | undefined;
  declare unread: number;
  declare items: Notification[];
  declare open: boolean;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor() {
    super();
    this.feed = undefined;
    this.unread = 0;
    this.items = [];
    this.open = false;
  }

  #onChange = (e: Event) => {
    const c = (e as CustomEvent<LiveChange>).detail;
    if (c.source === "poll" || c.message?.event === "notification.created") {
      clearTimeout(this.#timer);
      this.#timer = setTimeout(() => void this.#load(), 100);
    }
  };

  override connectedCallback(): void {
    super.connectedCallback();
    void this.#load();
  }
  override updated(changed: Map<string, unknown>): void {
    if (changed.has("feed")) {
      (changed.get("feed") as LiveFeed | undefined)?.removeEventListener("change", this.#onChange);
      this.feed?.addEventListener("change", this.#onChange);
    }
  }
  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.#timer);
    this.feed?.removeEventListener("change", this.#onChange);
  }

  async #load(): Promise<void> {
    try {
      const r = await loadNotifications();
      this.unread = r.unread_count;
      this.items = r.data;
    } catch {
      // The bell stays as it was; the next change or poll tries again.
    }
  }

  async #read(n: Notification): Promise<void> {
    if (n.read_at === null) await readNotification(n.id).catch(() => {});
    await this.#load();
  }
  async #readAll(): Promise<void> {
    await readAllNotifications().catch(() => {});
    await this.#load();
  }
  async #dismiss(n: Notification): Promise<void> {
    await dismissNotification(n.id).catch(() => {});
    await this.#load();
  }

  #link(n: Notification) {
    const data = n.data as { session_id?: unknown; image_id?: unknown };
    if (typeof data.session_id === "string") return `/sessions/${encodeURIComponent(data.session_id)}`;
    // An image build's or import's end: the Images page lists the member's own with their state.
    return typeof data.image_id === "string" ? "/images" : undefined;
  }

  override render() {
    const label = this.unread === 1 ? "1 unread notification" : `${this.unread} unread notifications`;
    return html`<button type="button" class="bell" data-testid=${SHELL_TEST_IDS.bell} aria-haspopup="true" aria-expanded=${this.open ? "true" : "false"} aria-label="Notifications, ${label}" @click=${() => {
      this.open = !this.open;
      if (this.open) void this.#load();
    }}>
        <svg viewBox="0 0 16 16" width="18" height="18" aria-hidden="true"><path d="M8 1.5a4 4 0 0 0-4 4v2.8L2.5 11h11L12 8.3V5.5a4 4 0 0 0-4-4Zm-1.6 11a1.6 1.6 0 0 0 3.2 0" fill="none" stroke="currentColor" stroke-width="1.3"></path></svg>
        ${this.unread > 0 ? html`<span class="count" data-testid=${SHELL_TEST_IDS.count} aria-hidden="true">${this.unread > 99 ? "99+" : this.unread}</span>` : nothing}
      </button>
      ${
        this.open
          ? html`<div class="panel" role="region" aria-label="Notifications" data-testid=${SHELL_TEST_IDS.panel}>
            <div class="head"><strong>Notifications</strong>${this.unread > 0 ? html`<button type="button" @click=${() => this.#readAll()} data-testid=${SHELL_TEST_IDS.readAll}>Mark all read</button>` : nothing}</div>
            ${
              this.items.length === 0
                ? html`<p class="muted">Nothing new. Credits running low, paused or failed sessions and decisions on your requests show up here.</p>`
                : html`<ul>${this.items.map((n) => {
                    const href = this.#link(n);
                    return html`<li data-testid=${SHELL_TEST_IDS.item} data-kind=${n.kind} ?data-unread=${n.read_at === null}>
                      ${href ? html`<a class="title" href=${href} @click=${() => this.#read(n)}>${n.title}</a>` : html`<span class="title">${n.title}</span>`}
                      <span>${n.body}</span>
                      <div class="row"><span class="muted">${formatRelative(n.created_at)}</span>
                        <span>${n.read_at === null ? html`<button type="button" @click=${() => this.#read(n)}>Mark read</button>` : nothing}
                        <button type="button" @click=${() => this.#dismiss(n)} aria-label="Dismiss ${n.title}">Dismiss</button></span></div>
                    </li>`;
                  })}</ul>`
            }
            <p class="settings"><a href="/settings/notifications" @click=${() => (this.open = false)} data-testid=${SHELL_TEST_IDS.settingsLink}>Notification settings</a></p>
          </div>`
          : nothing
      }`;
  }
}
