export type QuotaRequestStatus = "pending" | "approved" | "partially_approved" | "denied" | "cancelled";
export type QuotaRequestScope = "user" | "project";

/** Limit name (the REST API's snake_case) to a number. */
export type LimitValues = Record<string, number>;

export interface QuotaRequestRow {
  id: string;
  organization_id: string;
  project_id: string | null;
  scope: QuotaRequestScope;
  requester_id: string;
  /** Joined from users when read (absent right after an insert). */
  requester_email?: string;
  asked: LimitValues;
  current: Record<string, number | null>;
  reason: string;
  status: QuotaRequestStatus;
  granted: LimitValues | null;
  policy_name: string | null;
  decided_by: string | null;
  decision_note: string | null;
  created_at: Date;
  decided_at: Date | null;
}
