// Test ids of the organizations', projects' and users' admin pages and the members panel they share.
export const DIRECTORY_TEST_IDS = {
  organizationsTable: "organizations-table",
  projectsTable: "projects-table",
  membersPanel: "members-panel",
  createUserForm: "create-user-form",
  usersTable: "users-table",
  userRow: "user-row",
} as const;
