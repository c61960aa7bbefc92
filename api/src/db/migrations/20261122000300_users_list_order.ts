import type { Knex } from "knex";

// The users list pages in (created_at, id) order (db/operations/users/listUsers.ts). With this index a
// page is an index scan that stops after the page's rows, where a sort had to read and order every
// user; the total is counted apart in the same statement (db/page.ts).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable("users", (t) => {
    t.index(["created_at", "id"], "users_list_order");
  });
}
