// Says which way session changes arrive: the live stream, or polling when the stream dropped.
import { css, html, LitElement } from "lit";
import type { LiveFeed, LiveMode } from "../../api/live-feed.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { SHELL_TEST_IDS } from "../../test-ids/shell.ts";

const LABEL: Record<LiveMode, { text: string; title: string }> = {
  off: { text: "Offline", title: "Not receiving updates" },
  connecting: { text: "Connecting…", title: "Opening the live stream" },
  live: { text: "Live", title: "Session changes arrive as they happen (server-sent events)" },
  polling: {
    text: "Polling",
    title: "The live stream is unavailable; the console refreshes every few seconds and keeps trying the stream",
  },
};

export class BerthLiveIndicator extends LitElement {
  static override styles = [
    tokens,
    shared,
    css`
      .ind {
        display: inline-flex;
        align-items: center;
        gap: 0.35rem;
        font-size: 0.85rem;
        padding: 0.15rem 0.55rem;
        border-radius: 999px;
        border: 1px solid var(--berth-border);
        background: var(--berth-bg);
        white-space: nowrap;
      }
      .dot {
        width: 0.55rem;
        height: 0.55rem;
        border-radius: 50%;
        background: var(--berth-fg-muted);
      }
      [data-mode="live"] .dot {
        background: var(--berth-ok);
      }
      [data-mode="polling"] .dot {
        background: var(--berth-warn);
      }
    `,
  ];
  static override properties = { feed: { attribute: false }, mode: { state: true } };
  declare feed: LiveFeed | undefined;
  declare mode: LiveMode;
  #onMode = () => {
    this.mode = this.feed?.mode ?? "off";
  };
  constructor() {
    super();
    this.feed = undefined;
    this.mode = "off";
  }
  override updated(changed: Map<string, unknown>): void {
    if (changed.has("feed")) {
      (changed.get("feed") as LiveFeed | undefined)?.removeEventListener("mode", this.#onMode);
      this.feed?.addEventListener("mode", this.#onMode);
      this.#onMode();
    }
  }
  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.feed?.removeEventListener("mode", this.#onMode);
  }
  override render() {
    const l = LABEL[this.mode];
    return html`<span class="ind" role="status" data-testid=${SHELL_TEST_IDS.liveIndicator} data-mode=${this.mode} title=${l.title}>
      <span class="dot" aria-hidden="true"></span><span>${l.text}</span><span class="visually-hidden">: ${l.title}</span>
    </span>`;
  }
}
