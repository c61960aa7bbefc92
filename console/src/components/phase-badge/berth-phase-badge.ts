// A session's phase as a coloured badge with its meaning as text for everyone (not colour alone).
import { html, LitElement } from "lit";
import { isTransitional, phaseHelp, phaseTone } from "../../data/phases.ts";
import { page } from "../../styles/page.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { SHELL_TEST_IDS } from "../../test-ids/shell.ts";

export class BerthPhaseBadge extends LitElement {
  static override styles = [tokens, shared, page];
  static override properties = { phase: { type: String } };
  declare phase: string;
  constructor() {
    super();
    this.phase = "Unknown";
  }
  override render() {
    return html`<span class="badge tone-${phaseTone(this.phase)}" title=${phaseHelp(this.phase)} data-testid=${SHELL_TEST_IDS.phase} data-phase=${this.phase}>${isTransitional(this.phase) ? "◌ " : ""}${this.phase}</span>`;
  }
}
