// Test ids of a cluster's MIG layouts section (components/mig-layouts).
export const MIG_LAYOUTS_TEST_IDS = {
  section: "mig-layouts",
  table: "mig-layouts-table",
  row: "mig-layout-row",
  nodes: "mig-layout-nodes",
  createForm: "mig-layout-create",
  formError: "mig-layout-form-error",
  notice: "mig-layouts-notice",
} as const;
