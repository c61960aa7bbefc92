// A time-series chart drawn by uPlot (a small, maintained canvas chart library) with what a canvas lacks:
// a text alternative (a sentence, and a table of latest/min/mean/max per series), and a keyboard cursor
// (focus the chart, then ← → Home End; the value under the cursor is announced).
import { css, html, LitElement, nothing, type PropertyValues, unsafeCSS } from "lit";
import uPlot from "uplot";
import uPlotCss from "uplot/dist/uPlot.min.css?inline";
import { describe, formatValue, nextIndex, type PlotAnswer, summarize, toColumns, type Unit } from "../../data/plot.ts";
import { shared, tokens } from "../../styles/shared.ts";
import { MONITORING_PANEL_TEST_IDS } from "../../test-ids/monitoring-panel.ts";

/** Distinguishable on light and dark backgrounds, and for the common colour-vision deficiencies. */
const PALETTE = ["#1f77d0", "#e8710a", "#1a9e77", "#d6336c", "#7b61c9", "#8c6d1f", "#0f8ea8", "#5f6b7a"];

export class BerthTimeseriesChart extends LitElement {
  static override styles = [
    tokens,
    shared,
    unsafeCSS(uPlotCss),
    css`
      :host {
        display: block;
      }
      figure {
        margin: 0;
      }
      figcaption {
        font-weight: 600;
        margin-bottom: 0.25rem;
      }
      .plot {
        border-radius: var(--berth-radius);
        min-height: 12rem;
      }
      .plot:focus-visible {
        outline: 3px solid var(--berth-focus);
        outline-offset: 2px;
      }
      .readout {
        min-height: 1.5em;
        font-size: 0.875rem;
        color: var(--berth-fg-muted);
      }
      .u-legend {
        font-size: 0.8125rem;
        color: var(--berth-fg);
      }
      details {
        font-size: 0.875rem;
      }
      td,
      th {
        padding: 0.15rem 0.5rem;
        text-align: left;
      }
    `,
  ];
  static override properties = {
    heading: { type: String },
    unit: { type: String },
    answer: { attribute: false },
    height: { type: Number },
    readout: { state: true },
  };
  declare heading: string;
  declare unit: Unit;
  declare answer: PlotAnswer | undefined;
  declare height: number;
  declare readout: string;
  #plot: uPlot | undefined;
  #cursor = -1;
  #resize = new ResizeObserver(() => this.#fit());

  constructor() {
    super();
    this.heading = "";
    this.unit = "count";
    this.answer = undefined;
    this.height = 200;
    this.readout = "";
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#resize.disconnect();
    this.#plot?.destroy();
    this.#plot = undefined;
  }

  protected override updated(changed: PropertyValues): void {
    if (!changed.has("answer") && !changed.has("unit")) return;
    const host = this.renderRoot.querySelector<HTMLElement>(".plot");
    if (!host || !this.answer) return;
    const a = this.answer;
    const sameShape =
      this.#plot &&
      this.#plot.series.length === a.series.length + 1 &&
      a.series.every((s, i) => this.#plot?.series[i + 1]?.label === s.label);
    if (sameShape) {
      this.#plot?.setData(toColumns(a));
      return;
    }
    this.#plot?.destroy();
    const unit = this.unit;
    const style = getComputedStyle(this);
    const fg = style.getPropertyValue("--berth-fg-muted").trim() || "#505a66";
    const grid = style.getPropertyValue("--berth-border").trim() || "#c9d0d9";
    const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    this.#plot = new uPlot(
      {
        width: Math.max(240, host.clientWidth),
        height: this.height,
        cursor: { drag: { x: false, y: false } },
        scales: { y: unit === "percent" ? { range: [0, 100] } : {} },
        axes: [axis, { ...axis, size: 76, values: (_u, ticks) => ticks.map((v) => formatValue(v, unit)) }],
        series: [
          {},
          ...a.series.map((s, i) => ({
            label: s.label,
            stroke: PALETTE[i % PALETTE.length] as string,
            width: 2,
            spanGaps: false,
            // A new series has a handful of samples: dots, or a lone sample would not show at all.
            points: { show: s.values.filter((v) => v !== null).length < 30, size: 6 },
            value: (_u: uPlot, v: number | null) => formatValue(v, unit),
          })),
        ],
      },
      toColumns(a),
      host,
    );
    this.#resize.disconnect();
    this.#resize.observe(host);
  }

  #fit(): void {
    const host = this.renderRoot.querySelector<HTMLElement>(".plot");
    if (this.#plot && host && host.clientWidth > 0)
      this.#plot.setSize({ width: host.clientWidth, height: this.height });
  }

  #key(e: KeyboardEvent): void {
    const a = this.answer;
    if (!a || a.timestamps.length === 0 || !this.#plot) return;
    const last = a.timestamps.length - 1;
    const from = this.#cursor < 0 ? last : this.#cursor;
    let i: number;
    if (e.key === "ArrowLeft") i = nextIndex(a, from, -1);
    else if (e.key === "ArrowRight") i = nextIndex(a, from, 1);
    else if (e.key === "Home") i = 0;
    else if (e.key === "End") i = last;
    else return;
    e.preventDefault();
    this.#cursor = i;
    const left = this.#plot.valToPos(a.timestamps[i] as number, "x");
    this.#plot.setCursor({ left, top: 10 });
    const at = new Date((a.timestamps[i] as number) * 1000).toLocaleString();
    this.readout = `${at}: ${a.series.map((s) => `${s.label} ${formatValue(s.values[i], this.unit)}`).join(", ")}`;
  }

  override render() {
    const a = this.answer;
    if (!a) return nothing;
    const summary = summarize(a);
    return html`<figure>
      <figcaption>${this.heading}</figcaption>
      <div
        class="plot"
        tabindex="0"
        role="group"
        aria-label=${`${describe(this.heading, a, this.unit)} Use the left and right arrow keys to read the values.`}
        @keydown=${(e: KeyboardEvent) => this.#key(e)}
      ></div>
      <p class="readout" aria-live="polite" data-testid=${MONITORING_PANEL_TEST_IDS.chartReadout}>${this.readout}</p>
      <details>
        <summary>Data as a table</summary>
        <table data-testid=${MONITORING_PANEL_TEST_IDS.chartTable}>
          <caption class="visually-hidden">${this.heading}: per series over the range</caption>
          <thead><tr><th scope="col">Series</th><th scope="col">Now</th><th scope="col">Min</th><th scope="col">Mean</th><th scope="col">Max</th></tr></thead>
          <tbody>${summary.map(
            (s) => html`<tr data-testid=${MONITORING_PANEL_TEST_IDS.chartRow} data-series=${s.label}>
              <th scope="row">${s.label}</th><td data-testid=${MONITORING_PANEL_TEST_IDS.chartLatest}>${formatValue(s.latest, this.unit)}</td><td>${formatValue(s.min, this.unit)}</td><td>${formatValue(s.mean, this.unit)}</td><td>${formatValue(s.max, this.unit)}</td>
            </tr>`,
          )}</tbody>
        </table>
      </details>
    </figure>`;
  }
}
