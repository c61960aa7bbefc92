import type { Knex } from "knex";

// Members' private images. The row is the image's life (importing or building, progress, ready with its
// digest, failed with a reason) and what the per-member limit counts under a lock; once ready, an Image
// resource in the catalog carries the digest reference sessions pull (api/src/domain/images/).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("private_images", (t) => {
    t.text("id").primary(); // img-<12>: also the Image resource's name
    t.text("owner_id").notNullable();
    t.text("organization_id").notNullable();
    t.text("source").notNullable(); // import | build
    t.text("source_reference"); // the public reference an import copies
    t.text("display_name").notNullable();
    t.text("kind").notNullable(); // jupyterlab | code-server | terminal
    t.text("repository").notNullable(); // path in Berth's registry: <org>/<owner>/<name>
    t.text("tag").notNullable();
    t.text("state").notNullable(); // importing | building | ready | failed
    t.text("failure_code");
    t.text("failure_reason");
    t.text("digest");
    t.bigInteger("size_bytes");
    t.bigInteger("bytes_total");
    t.bigInteger("bytes_copied").notNullable().defaultTo(0);
    // A worker holds an import while this lies in the future; a crashed one's import is taken over.
    t.text("claimed_by");
    t.timestamp("claimed_until", { useTz: true });
    t.integer("attempts").notNullable().defaultTo(0);
    t.timestamp("created_at", { useTz: true }).notNullable();
    t.timestamp("updated_at", { useTz: true }).notNullable();
    t.timestamp("ready_at", { useTz: true });
    t.index(["owner_id", "created_at"], "private_images_owner");
  });
  await knex.raw(
    "CREATE INDEX private_images_pending ON private_images (created_at) WHERE state IN ('importing', 'building')",
  );
}
