// Test ids of the queue page.
export const QUEUE_TEST_IDS = {
  table: "queue-table",
  row: "queue-row",
  position: "queue-position",
  reason: "queue-reason",
} as const;
