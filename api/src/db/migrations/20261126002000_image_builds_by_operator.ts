import type { Knex } from "knex";

// Builds run by the build cluster's operator from an ImageBuild resource (docs/dev/images.md): when the
// worker wrote that resource (`dispatched_at`), what the operator last reported of its Job (`job_phase`,
// `job_message`; `job_created_at` already exists), and the log cursor that drops lines the operator sends
// again after a restart (the newest kubelet timestamp stored and how many lines carried it). A cluster
// marked for builds may name the Secret its builds push with (`push_secret`: a name, never its content).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("image_builds", (t) => {
    t.timestamp("dispatched_at", { useTz: true });
    t.text("job_phase");
    t.text("job_message");
    t.text("log_cursor_at");
    t.integer("log_cursor_n").notNullable().defaultTo(0);
  });
  await knex.schema.alterTable("build_clusters", (t) => {
    t.text("push_secret");
  });
}
