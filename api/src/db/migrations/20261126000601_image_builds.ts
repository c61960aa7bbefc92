import type { Knex } from "knex";

// Image builds: the build request (its Dockerfile, base image and the hash of both, which lets identical
// requests reuse an earlier result), its state as the worker drives the Job on a build cluster, and its
// log in batches (size-capped). `build_clusters` are the clusters an administrator marked for builds.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("build_clusters", (t) => {
    t.text("cluster_id").primary();
    t.text("marked_by").notNullable();
    t.timestamp("marked_at", { useTz: true }).notNullable();
  });
  await knex.schema.createTable("image_builds", (t) => {
    t.text("id").primary(); // bld-<12>
    t.text("owner_id").notNullable();
    t.text("organization_id").notNullable();
    t.text("image_id").notNullable(); // private_images.id (kept after the image is deleted: history)
    t.text("input_hash").notNullable();
    t.text("dockerfile").notNullable();
    t.text("base_image"); // catalog image name
    t.text("base_reference"); // what FROM gets
    t.text("state").notNullable(); // queued | running | succeeded | failed | cancelled
    t.text("failure_reason");
    t.text("cluster_id").notNullable();
    t.text("job_name").notNullable();
    t.text("reported_digest");
    t.boolean("cancel_requested").notNullable().defaultTo(false);
    t.integer("log_bytes").notNullable().defaultTo(0);
    t.boolean("log_truncated").notNullable().defaultTo(false);
    t.boolean("reused").notNullable().defaultTo(false);
    t.timestamp("created_at", { useTz: true }).notNullable();
    t.timestamp("job_created_at", { useTz: true });
    t.timestamp("started_at", { useTz: true });
    t.timestamp("finished_at", { useTz: true });
    t.index(["owner_id", "created_at"], "image_builds_owner");
    t.index(["owner_id", "input_hash"], "image_builds_inputs");
  });
  await knex.raw("CREATE INDEX image_builds_active ON image_builds (created_at) WHERE state IN ('queued', 'running')");
  await knex.schema.createTable("image_build_logs", (t) => {
    t.bigIncrements("seq").primary();
    t.text("build_id").notNullable();
    t.text("text").notNullable(); // lines, newline-terminated
    t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(["build_id", "seq"]);
  });
}
