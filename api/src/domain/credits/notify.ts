// Notifications for the bell (`notifications` table; the /notifications routes serve it).
import type { Knex } from "knex";

export interface NewNotification {
  userId: string;
  organizationId: string | null;
  kind: string;
  title: string;
  body: string;
  data?: Record<string, unknown>;
  at: Date;
}

export async function notify(db: Knex, ns: NewNotification | NewNotification[]): Promise<void> {
  const list = Array.isArray(ns) ? ns : [ns];
  if (list.length === 0) return;
  await db("notifications").insert(
    list.map((n) => ({
      user_id: n.userId,
      organization_id: n.organizationId,
      kind: n.kind,
      title: n.title,
      body: n.body,
      data: JSON.stringify(n.data ?? {}),
      created_at: n.at,
    })),
  );
}
