// Test ids of the webhooks page.
export const WEBHOOKS_TEST_IDS = {
  table: "webhooks-table",
  row: "webhook-row",
  state: "webhook-state",
  deliveries: "deliveries-table",
  deliveryRow: "delivery-row",
  deliveryState: "delivery-state",
  secretPanel: "webhook-secret-panel",
  secret: "webhook-secret",
} as const;
