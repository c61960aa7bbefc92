// Test ids of the storage pools' admin page.
export const POOLS_TEST_IDS = {
  table: "pools-table",
  row: "pool-row",
  capacity: "pool-capacity",
  source: "pool-source",
  via: "pool-via",
  stale: "pool-stale",
  age: "pool-age",
} as const;
