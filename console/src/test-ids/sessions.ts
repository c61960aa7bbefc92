// Test ids of the sessions list.
export const SESSIONS_TEST_IDS = {
  filterScope: "filter-scope",
  filterState: "filter-state",
  filterCluster: "filter-cluster",
  table: "sessions-table",
  row: "session-row",
  link: "session-link",
  updatedAt: "updated-at",
  bulkTerminate: "bulk-terminate",
  newSession: "new-session",
} as const;
