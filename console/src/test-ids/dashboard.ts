// Test ids of the dashboard: tiles, lists and charts, for a member and for an administrator.
export const DASHBOARD_TEST_IDS = {
  /** A list of the member's sessions by state (running, paused). */
  list: (name: string) => `dashboard-${name}`,
  me: "dashboard-me",
  tileRunning: "tile-running",
  tilePaused: "tile-paused",
  tileGpuHours: "tile-gpu-hours",
  tileSpent: "tile-spent",
  tileBalance: "tile-balance",
  admin: "dashboard-admin",
  tileQueue: "tile-queue",
  tileNodes: "tile-nodes",
  spend: "dashboard-spend",
  tileStorage: "tile-storage",
  fleet: "dashboard-fleet",
  fleetRow: "fleet-row",
  chartsScope: "dashboard-charts-scope",
} as const;
