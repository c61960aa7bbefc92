// Page object of the dashboard: a member's tiles and sessions, an administrator's fleet and spend.
import { DASHBOARD_TEST_IDS as D } from "@berth/console/test-ids/dashboard";
import { MONITORING_PANEL_TEST_IDS as M } from "@berth/console/test-ids/monitoring-panel";
import type { Locator, Page } from "playwright-core";
import { MonitoringPanel } from "./monitoring-panel.ts";

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
