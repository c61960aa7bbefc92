// One catalogued panel (GET /api/v1/monitoring/panels/{id}) as a chart, refreshed every 15 s while the
// range ends now and the tab is visible. The metrics server being down is said plainly (503 unavailable);
// the rest of the page does not depend on it.
import { html, LitElement, nothing, type PropertyValues } from "lit";
import { ApiError } from "../../api/client.ts";
import type { MonitoringPanelAnswer } from "../../api/openapi.gen.ts";
import type { Unit } from "../../data/plot.ts";
import { shared, tokens } from "../../styles/shared.ts";
import "../pending/index.ts";
import "../timeseries-chart/index.ts";
import { loadMonitoringPanel } from "../../app/insights.ts";
import { MONITORING_PANEL_TEST_IDS } from "../../test-ids/monitoring-panel.ts";

export type PanelRange = "15m" | "1h" | "6h" | "24h" | "7d" | "30d";

export class BerthMonitoringPanel extends LitElement {
  static override styles = [tokens, shared];
  static override properties = {
    panel: { type: String },
    scope: { attribute: false },
    range: { type: String },
    heading: { type: String },
    answer: { state: true },
    problem: { state: true },
  };
  declare panel: string;
  declare scope: Record<string, string | undefined>;
  declare range: PanelRange;
  declare heading: string;
  declare answer: MonitoringPanelAnswer | undefined;
  declare problem: string | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #abort: AbortController | undefined;

  constructor() {
    super();
    this.panel = "";
    this.scope = {};
    this.range = "1h";
    this.heading = "";
    this.answer = undefined;
    this.problem = undefined;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.#timer = setInterval(() => {
      if (document.visibilityState === "visible") void this.#load();
    }, 15_000);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearInterval(this.#timer);
    this.#abort?.abort();
  }

  protected override willUpdate(changed: PropertyValues): void {
    if (changed.has("panel") || changed.has("scope") || changed.has("range")) void this.#load();
  }

  /** Loads now (the page's own refresh, tests). */
  async refresh(): Promise<void> {
    await this.#load();
  }

  async #load(): Promise<void> {
    if (!this.panel) return;
    this.#abort?.abort();
    const abort = new AbortController();
    this.#abort = abort;
    const query = Object.fromEntries(
      Object.entries({ ...this.scope, range: this.range }).filter(([, v]) => v !== undefined),
    );
    try {
      this.answer = await loadMonitoringPanel(this.panel, query as never, abort.signal);
      this.problem = undefined;
    } catch (err) {
      if (abort.signal.aborted) return;
      this.problem =
        err instanceof ApiError && err.code === "unavailable"
          ? "The metrics server is not answering right now; charts come back on their own when it does."
          : err instanceof ApiError
            ? err.message
            : "The chart could not be loaded.";
    }
  }

  override render() {
    const title = this.heading || this.answer?.panel.title || this.panel;
    return html`<section class="card" data-testid=${MONITORING_PANEL_TEST_IDS.panel} data-panel=${this.panel}>
      ${this.problem ? html`<p class="muted" role="status" data-testid=${MONITORING_PANEL_TEST_IDS.problem}><strong>${title}:</strong> ${this.problem}</p>` : nothing}
      ${
        this.answer
          ? this.answer.series.length === 0
            ? html`<p class="muted" data-testid=${MONITORING_PANEL_TEST_IDS.empty}><strong>${title}:</strong> no data in this range yet.</p>`
            : html`<berth-timeseries-chart .heading=${title} .unit=${this.answer.panel.unit as Unit} .answer=${this.answer}></berth-timeseries-chart>`
          : this.problem
            ? nothing
            : html`<berth-pending label=${`Loading ${title}…`}></berth-pending>`
      }
    </section>`;
  }
}
