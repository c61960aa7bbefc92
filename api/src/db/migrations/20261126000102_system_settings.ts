import type { Knex } from "knex";

// System settings (docs/dev/system-settings.md): one row per setting group (branding, signup, placement),
// its value as JSON checked by the settings domain's schemas; absent means the default.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("system_settings", (t) => {
    t.text("key").primary();
    t.jsonb("value").notNullable();
    t.text("updated_by");
    t.timestamp("updated_at", { useTz: true }).notNullable();
  });
}
