// Test ids of the audit log page.
export const AUDIT_TEST_IDS = {
  filters: "audit-filters",
  apply: "audit-apply",
  download: "audit-download",
  table: "audit-table",
  row: "audit-row",
  total: "audit-total",
} as const;
