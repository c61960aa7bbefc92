// Test ids of the administrators' inbox of quota requests.
export const QUOTA_INBOX_TEST_IDS = {
  table: "quota-inbox",
  row: "inbox-row",
  status: "inbox-status",
  decide: "inbox-decide",
  filterStatus: "inbox-filter-status",
  decidePanel: "quota-decide-panel",
  /** The granted value of a limit, by the limit's name. */
  grant: (limit: string) => `grant-${limit}`,
  grantProblem: "grant-problem",
  note: "quota-decide-note",
  approve: "quota-approve",
  deny: "quota-deny",
} as const;
