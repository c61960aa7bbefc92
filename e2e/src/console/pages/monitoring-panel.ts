// Page object of a monitoring panel with its time-series chart, as the dashboard, a cluster's page and a
// session's page show it.
import { MONITORING_PANEL_TEST_IDS as M } from "@berth/console/test-ids/monitoring-panel";
import type { Locator } from "playwright-core";

export class MonitoringPanel {
  readonly root: Locator;
  constructor(root: Locator) {
    this.root = root;
  }
  rows() {
    return this.root.getByTestId(M.chartRow);
  }
  /** The series the chart's table lists, by name. */
  series(): Promise<(string | null)[]> {
    return this.rows().evaluateAll((rows) => rows.map((r) => r.getAttribute("data-series")));
  }
  /** The first series' latest value as shown ("35 %", "12 ms"). */
  latest() {
    return this.root.getByTestId(M.chartLatest).first();
  }
  readout() {
    return this.root.getByTestId(M.chartReadout);
  }
  /** Moves the keyboard to the plot (its readout then follows the arrow keys). */
  async focusPlot(): Promise<void> {
    await this.root.locator(".plot").focus();
  }
  /** Opens the chart's table of values. */
  async openTable(): Promise<void> {
    await this.root.locator("summary").click();
  }
}
