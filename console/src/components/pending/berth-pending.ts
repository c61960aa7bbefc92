// Loading: a labelled, polite status; after a while it says that it is still waiting (no endless spinner
// without words).
import { css, html, LitElement } from "lit";
import { shared, tokens } from "../../styles/shared.ts";
import { SHELL_TEST_IDS } from "../../test-ids/shell.ts";

export class BerthPending extends LitElement {
  static override styles = [
    tokens,
    shared,
    css`
      .pending {
        display: flex;
        gap: 0.6rem;
        align-items: center;
        padding: 1rem 0;
        color: var(--berth-fg-muted);
      }
      .spinner {
        width: 1rem;
        height: 1rem;
        border-radius: 50%;
        border: 2px solid var(--berth-border);
        border-top-color: var(--berth-accent);
        animation: spin 0.8s linear infinite;
      }
      @keyframes spin {
        to {
          transform: rotate(360deg);
        }
      }
      @media (prefers-reduced-motion: reduce) {
        .spinner {
          animation: none;
        }
      }
    `,
  ];
  static override properties = { label: { type: String }, slow: { state: true } };
  declare label: string;
  declare slow: boolean;
  #timer: ReturnType<typeof setTimeout> | undefined;
  constructor() {
    super();
    this.label = "Loading…";
    this.slow = false;
  }
  override connectedCallback(): void {
    super.connectedCallback();
    this.#timer = setTimeout(() => {
      this.slow = true;
    }, 8000);
  }
  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.#timer);
  }
  override render() {
    return html`<div class="pending" role="status" aria-live="polite" data-testid=${SHELL_TEST_IDS.pending}>
      <span class="spinner" aria-hidden="true"></span>
      <span>${this.label}${this.slow ? " Still waiting for the API…" : ""}</span>
    </div>`;
  }
}
