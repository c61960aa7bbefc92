// Test ids of the fair-share page for administrators: standings per organization, project and user, and the reclaim log.
export const FAIR_SHARE_TEST_IDS = {
  asOf: "fair-share-as-of",
  capacity: "fair-share-capacity",
  organizationFilter: "fair-share-organization-filter",
  organization: "fair-share-organization",
  row: "fair-share-row",
  reclaims: "fair-share-reclaims",
  reclaimRow: "fair-share-reclaim-row",
} as const;
