// The test ids the console's pages carry (data-testid) and the end-to-end page objects find them by
// (e2e/src/console/pages/): one name for both sides, so a renamed id fails the type-check, not a journey.
// Grouped by the page or component that renders them; exported as @berth/console/test-ids.
export const TEST_IDS = {
  /** The shell and the components every page shares. */
  shell: {
    adminMenu: "admin-menu",
    confirmDialog: "confirm-dialog",
    confirmOk: "confirm-ok",
    confirmCancel: "confirm-cancel",
    emptyState: "empty-state",
    errorMessage: "error-message",
    errorRequestId: "error-request-id",
  },
  webhooks: {
    table: "webhooks-table",
    row: "webhook-row",
    state: "webhook-state",
    deliveries: "deliveries-table",
    deliveryRow: "delivery-row",
    deliveryState: "delivery-state",
    secretPanel: "webhook-secret-panel",
    secret: "webhook-secret",
  },
} as const;
