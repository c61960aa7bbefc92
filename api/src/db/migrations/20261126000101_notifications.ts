import type { Knex } from "knex";

// The notification centre (docs/dev/governance.md). Billing already writes `notifications`; this adds
// what the bell needs: dismissal, a dedupe key (at most one open notification per user and key: a
// streak's second "credits low" finds the first still unread and is not written), and a way onto the
// session event stream: a notification is also a `notification.created` row of `session_events`, whose
// session columns are then empty (the stream shows it to its user only).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("notifications", (t) => {
    t.timestamp("dismissed_at", { useTz: true });
    t.text("dedupe_key");
    t.text("severity").notNullable().defaultTo("info"); // info | warning | critical
  });
  await knex.raw(`
    ALTER TABLE notifications ADD CONSTRAINT notifications_severity CHECK (severity IN ('info', 'warning', 'critical'));
    CREATE UNIQUE INDEX notifications_open_dedupe ON notifications (user_id, dedupe_key)
      WHERE dedupe_key IS NOT NULL AND read_at IS NULL AND dismissed_at IS NULL;
    CREATE INDEX notifications_unread ON notifications (user_id) WHERE read_at IS NULL AND dismissed_at IS NULL;
    CREATE INDEX notifications_created ON notifications (created_at);
    ALTER TABLE session_events ALTER COLUMN session_id DROP NOT NULL, ALTER COLUMN organization_id DROP NOT NULL;
  `);
  // A user's choice per kind; no row means on. Critical kinds ignore it (domain/notifications/kinds.ts).
  await knex.schema.createTable("notification_preferences", (t) => {
    t.text("user_id").notNullable();
    t.text("kind").notNullable();
    t.boolean("enabled").notNullable();
    t.timestamp("updated_at", { useTz: true }).notNullable();
    t.primary(["user_id", "kind"]);
  });
}
