import type { Knex } from "knex";

// Whom each volume is shared with, as Postgres keeps it beside the Volume resource's `spec.shares` (the
// source of truth for mounting): lists page through Postgres, so "shared with me" needs the subjects
// here. Written with the resource by the share route (api/src/domain/storage/shareVolume.ts); shares set
// before this table existed show in lists once they are set again.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("volume_shares", (t) => {
    t.text("volume_id").notNullable().references("volumes.id");
    t.text("subject_kind").notNullable(); // user | project
    t.text("subject_id").notNullable();
    t.text("access").notNullable(); // read_only | read_write
    t.primary(["volume_id", "subject_kind", "subject_id"]);
    t.index(["subject_kind", "subject_id"]);
  });
}
