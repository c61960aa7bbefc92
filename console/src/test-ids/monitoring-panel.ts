// Test ids of a monitoring panel and its time-series chart (components/monitoring-panel, components/timeseries-chart).
export const MONITORING_PANEL_TEST_IDS = {
  panel: "monitoring-panel",
  problem: "panel-problem",
  empty: "panel-empty",
  chartReadout: "chart-readout",
  chartTable: "chart-table",
  chartRow: "chart-row",
  chartLatest: "chart-latest",
} as const;
