import type { Knex } from "knex";

// System settings (docs/dev/governance.md): one row per setting group (branding, signup, placement),
// its value as JSON checked by the settings domain's schemas; absent means the default.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("system_settings", (t) => {
    t.text("key").primary();
    t.jsonb("value").notNullable();
    t.text("updated_by");
    t.timestamp("updated_at", { useTz: true }).notNullable();
  });
  // Sign-ups under the `approval` policy: the account exists, disabled, until an administrator decides.
  await knex.schema.createTable("signup_requests", (t) => {
    t.text("user_id").primary();
    t.text("email").notNullable();
    t.text("organization_id");
    t.text("status").notNullable(); // pending | approved | denied
    t.timestamp("created_at", { useTz: true }).notNullable();
    t.text("decided_by");
    t.timestamp("decided_at", { useTz: true });
    t.index(["status", "created_at"]);
  });
  await knex.raw(
    "ALTER TABLE signup_requests ADD CONSTRAINT signup_requests_status CHECK (status IN ('pending', 'approved', 'denied'))",
  );
}
