// A small inline SVG chart of a series (no chart library: a polyline is all a sparkline needs). The
// numbers are also given as text for screen readers.
import { css, html, LitElement, svg } from "lit";
import { sparkline } from "../../data/sparkline.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { SHELL_TEST_IDS } from "../../test-ids/shell.ts";

export class BerthUsageChart extends LitElement {
  static override styles = [
    tokens,
    shared,
    css`
      svg {
        width: 100%;
        height: 64px;
        display: block;
        color: var(--berth-accent);
      }
      .frame {
        border: 1px solid var(--berth-border);
        border-radius: var(--berth-radius);
        background: var(--berth-bg);
        padding: 0.25rem;
      }
    `,
  ];
  static override properties = { values: { attribute: false }, label: { type: String }, max: { type: Number } };
  declare values: (number | null)[];
  declare label: string;
  declare max: number | undefined;
  constructor() {
    super();
    this.values = [];
    this.label = "Usage";
    this.max = undefined;
  }
  override render() {
    const w = 300;
    const h = 60;
    const { line, area, min, max, last } = sparkline(this.values, w, h, this.max);
    const summary =
      last === undefined
        ? `${this.label}: no data yet`
        : `${this.label}: latest ${last.toFixed(0)}, range ${min.toFixed(0)}–${max.toFixed(0)} over ${this.values.length} samples`;
    return html`<figure class="frame" style="margin:0" data-testid=${SHELL_TEST_IDS.usageChart}>
      <svg viewBox="0 0 ${w} ${h}" preserveAspectRatio="none" role="img" aria-label=${summary}>
        ${svg`<path d=${area} fill="currentColor" fill-opacity="0.15"></path><path d=${line} fill="none" stroke="currentColor" stroke-width="2" vector-effect="non-scaling-stroke"></path>`}
      </svg>
      <figcaption class="hint">${summary}</figcaption>
    </figure>`;
  }
}
