export interface NotificationRow {
  id: string;
  user_id: string;
  organization_id: string | null;
  kind: string;
  severity: "info" | "warning" | "critical";
  title: string;
  body: string;
  data: Record<string, unknown>;
  dedupe_key: string | null;
  created_at: Date;
  read_at: Date | null;
  dismissed_at: Date | null;
}
