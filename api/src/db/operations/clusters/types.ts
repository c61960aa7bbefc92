export interface ClusterRow {
  id: string;
  name: string;
  session_domain: string;
  registered_at: Date;
  registered_by: string | null;
  deregistered_at: Date | null;
  deregistered_by: string | null;
  operator_token_jti: string | null;
  operator_token_issued_at: Date | null;
  operator_token_expires_at: Date | null;
  inventory_observed_at: Date | null;
  last_report_at: Date | null;
  /** Set by the worker's cluster health loop (migration 20261126001000_fleet_webhooks.ts). */
  unreachable_since?: Date | null;
}
