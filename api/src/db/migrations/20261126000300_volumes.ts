import type { Knex } from "knex";

// Volumes: the Volume resource is what controllers reconcile; this row is what lists page through, what
// quotas and pool capacity add up (under a lock, so two creates cannot both pass a limit), and what a
// volume's history keeps after its resource is gone.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("volumes", (t) => {
    t.text("id").primary();
    t.text("organization_id").notNullable().references("organizations.id");
    t.text("owner_kind").notNullable(); // user | project
    t.text("owner_id").notNullable();
    t.text("name").notNullable();
    t.integer("size_gb").notNullable();
    t.text("pool").notNullable();
    t.text("namespace").notNullable();
    t.text("cr_name").notNullable();
    t.text("created_by").notNullable();
    t.timestamp("created_at", { useTz: true }).notNullable();
    t.timestamp("updated_at", { useTz: true }).notNullable();
    t.timestamp("deleted_at", { useTz: true });
    t.index(["organization_id", "created_at"], "volumes_org_created");
    t.index(["owner_kind", "owner_id"], "volumes_owner");
    t.index(["pool"], "volumes_pool");
  });
  await knex.raw("ALTER TABLE volumes ADD CONSTRAINT volumes_size_positive CHECK (size_gb > 0)");
  // One live volume of a name per owner; a deleted one frees its name.
  await knex.raw(
    "CREATE UNIQUE INDEX volumes_owner_name ON volumes (owner_kind, owner_id, name) WHERE deleted_at IS NULL",
  );
}
