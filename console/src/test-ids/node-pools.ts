// Test ids of a cluster's node pools section (components/node-pools).
export const NODE_POOLS_TEST_IDS = {
  section: "node-pools",
  table: "node-pools-table",
  row: "node-pool-row",
  nodes: "node-pool-nodes",
  grant: "node-pool-grant",
  grantForm: "node-pool-grant-form",
  grantUserForm: "node-pool-grant-user-form",
  grantProjectForm: "node-pool-grant-project-form",
  noProjects: "node-pool-no-projects",
  createForm: "node-pool-create",
  notice: "node-pools-notice",
} as const;
