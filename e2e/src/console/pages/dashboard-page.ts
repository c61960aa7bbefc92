// Page objects of the dashboard (a member's tiles and sessions, an administrator's fleet and spend) and of
// a monitoring panel with its time-series chart, as the dashboard and a cluster's page show them.
import { DASHBOARD_TEST_IDS as D } from "@berth/console/test-ids/dashboard";
import { MONITORING_PANEL_TEST_IDS as M } from "@berth/console/test-ids/monitoring-panel";
import type { Locator, Page } from "playwright-core";

const TILES = {
  running: D.tileRunning,
  paused: D.tilePaused,
  gpuHours: D.tileGpuHours,
  spent: D.tileSpent,
  balance: D.tileBalance,
  queue: D.tileQueue,
  nodes: D.tileNodes,
  storage: D.tileStorage,
} as const;

export class DashboardPage {
  readonly page: Page;
  constructor(page: Page) {
    this.page = page;
  }
  /** The member's part (their sessions, GPU-hours, balance). */
  me() {
    return this.page.getByTestId(D.me);
  }
  /** The administrator's part; absent for a member. */
  admin() {
    return this.page.getByTestId(D.admin);
  }
  fleet() {
    return this.page.getByTestId(D.fleet);
  }
  /** A tile's figure. */
  tile(name: keyof typeof TILES) {
    return this.page.getByTestId(TILES[name]);
  }
  /** The member's sessions in a state (running, paused). */
  sessions(state: string) {
    return this.page.getByTestId(D.list(state));
  }
  /** Whose GPUs the charts show, in words. */
  chartsScope() {
    return this.page.getByTestId(D.chartsScope);
  }
  fleetRows() {
    return this.page.getByTestId(D.fleetRow);
  }
  /** The cells of the spend table's first row (organization, project, …). */
  firstSpendCells() {
    return this.page.getByTestId(D.spend).locator("tbody tr").first().locator("td");
  }
  /** A monitoring panel on the page, by its panel id (fleet.gpu_utilization, …). */
  panel(id: string, within?: Locator): MonitoringPanel {
    return new MonitoringPanel((within ?? this.page).locator(`berth-monitoring-panel[panel="${id}"]`));
  }
  /** The first panel's problem (the metrics server not answering, …). */
  firstPanelProblem() {
    return this.page.getByTestId(M.problem).first();
  }
}

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
