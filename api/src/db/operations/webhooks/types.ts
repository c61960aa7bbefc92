export interface WebhookEndpointRow {
  id: string;
  organization_id: string;
  url: string;
  description: string;
  event_types: string[];
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: Date | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

export type DeliveryState = "pending" | "succeeded" | "failed";

export interface WebhookDeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  ordering_key: string | null;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: Date;
  locked_until: Date | null;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A delivery with what sending it needs: the event and the endpoint. */
export interface ClaimedDelivery {
  id: string;
  attempts: number;
  event_id: string;
  event_type: string;
  payload: Record<string, unknown>;
  endpoint_id: string;
  organization_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

export interface WebhookAttemptRow {
  id: string;
  delivery_id: string;
  endpoint_id: string;
  event_id: string;
  attempt: number;
  attempted_at: Date;
  outcome: "succeeded" | "failed";
  status_code: number | null;
  response_body: string | null;
  error: string | null;
  latency_ms: number;
}
