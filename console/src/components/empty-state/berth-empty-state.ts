// An empty list says what it means and what to do next (a slot for the action).
import { css, html, LitElement } from "lit";
import { shared, tokens } from "../../styles/shared.ts";
import { SHELL_TEST_IDS } from "../../test-ids/shell.ts";

export class BerthEmptyState extends LitElement {
  static override styles = [
    tokens,
    shared,
    css`
      .empty {
        text-align: center;
        padding: 2rem 1rem;
        border: 1px dashed var(--berth-border);
        border-radius: var(--berth-radius);
        background: var(--berth-bg);
      }
      .title {
        font-weight: 600;
        margin: 0 0 0.25rem;
      }
      p {
        margin: 0 0 0.75rem;
      }
    `,
  ];
  static override properties = { heading: { type: String } };
  declare heading: string;
  constructor() {
    super();
    this.heading = "Nothing here yet";
  }
  override render() {
    return html`<div class="empty" data-testid=${SHELL_TEST_IDS.emptyState}>
      <p class="title">${this.heading}</p>
      <p class="muted"><slot></slot></p>
      <slot name="action"></slot>
    </div>`;
  }
}
