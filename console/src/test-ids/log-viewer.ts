// Test ids of a session's log viewer (components/log-viewer).
export const LOG_VIEWER_TEST_IDS = {
  refresh: "logs-refresh",
  follow: "logs-follow",
  text: "logs",
} as const;
