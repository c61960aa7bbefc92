// Test ids of the limits page: the member's effective limits and their quota requests.
export const QUOTAS_TEST_IDS = {
  organization: "quota-organization",
  project: "quota-project",
  limitsTable: "limits-table",
  /** A limit's row; its data-limit is the limit's name (max_gpus_per_user, …). */
  limitRow: "limit-row",
  limitValue: "limit-value",
  limitHeadroom: "limit-headroom",
  limitPolicy: "limit-policy",
  /** A limit's "Ask for more", by the limit's name. */
  askMore: (limit: string) => `ask-more-${limit}`,
  askForm: "quota-ask-form",
  askLimit: "ask-limit",
  askValue: "ask-value",
  askProblem: "ask-problem",
  askReason: "ask-reason",
  askSend: "ask-send",
  myRequests: "my-quota-requests",
  requestRow: "quota-request-row",
  requestStatus: "quota-request-status",
  withdraw: "quota-withdraw",
  inboxLink: "quota-inbox-link",
} as const;
