import type { Knex } from "knex";

// The two cross-cutting tables every route leans on: the append-only audit log and idempotency keys.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("audit_log", (t) => {
    t.bigIncrements("id");
    t.timestamp("at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text("actor_id"); // null for the system and for anonymous callers
    t.text("actor_kind").notNullable(); // user | operator | system | anonymous
    t.text("organization_id");
    t.text("action").notNullable(); // e.g. session.create
    t.text("target_kind");
    t.text("target_id");
    t.text("request_id");
    t.text("outcome").notNullable(); // success | failure
    t.integer("status");
    t.jsonb("details").notNullable().defaultTo("{}");
    t.index(["organization_id", "at"]);
    t.index(["actor_id", "at"]);
  });
  // Append-only: the database itself refuses to change history.
  await knex.raw(`
    CREATE FUNCTION berth_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'P0001';
    END $$;
    CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
      FOR EACH ROW EXECUTE FUNCTION berth_refuse_change();
  `);

  await knex.schema.createTable("idempotency_keys", (t) => {
    t.text("scope").notNullable(); // caller id + method + route template
    t.text("key").notNullable();
    t.text("request_hash").notNullable();
    t.text("state").notNullable(); // in_flight | done
    t.integer("status");
    t.jsonb("response");
    t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp("expires_at", { useTz: true }).notNullable();
    t.primary(["scope", "key"]);
    t.index(["expires_at"]);
  });
}
