import type { Knex } from "knex";

// Bulk user import and the welcome credit (docs/dev/identity.md, "Bulk import").
// - organization_welcome_credits: the amount an organization's wallet gives each new member once. That
//   "once" is the ledger's own idempotency key (welcome:<organization>:<user>), not a row here, so no
//   second table can drift from the ledger.
// - user_imports: each run (dry or real) with every row's result, so the results stay downloadable. No
//   temporary password is ever stored here: those are answered once.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("organization_welcome_credits", (t) => {
    t.text("organization_id").primary().references("id").inTable("organizations").onDelete("CASCADE");
    t.bigInteger("amount").notNullable();
    t.text("updated_by");
    t.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    "ALTER TABLE organization_welcome_credits ADD CONSTRAINT organization_welcome_credits_amount CHECK (amount >= 0)",
  );
  await knex.schema.createTable("user_imports", (t) => {
    t.text("id").primary(); // imp_<random>
    t.text("actor_id").notNullable();
    // The organizations the rows named; an org admin sees the imports whose every row was theirs.
    t.specificType("organization_ids", "text[]").notNullable();
    t.boolean("dry_run").notNullable();
    t.jsonb("counts").notNullable();
    t.jsonb("results").notNullable();
    t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(["actor_id", "created_at"]);
  });
}
