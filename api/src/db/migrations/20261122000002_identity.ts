import type { Knex } from "knex";

// Identity: users, organizations, projects (the contract's "groups"), memberships with roles, the
// login-failure log the throttle counts, and the once-per-database bootstrap marker.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("users", (t) => {
    t.text("id").primary(); // usr_<random>
    t.text("email").notNullable().unique(); // stored lowercased (checked below)
    t.text("display_name");
    t.text("password_hash").notNullable(); // PHC string, argon2id
    t.boolean("must_change_password").notNullable().defaultTo(false);
    t.boolean("is_super_admin").notNullable().defaultTo(false);
    t.boolean("disabled").notNullable().defaultTo(false);
    // Bumped on every password change, reset or disable: access tokens carry the version they were
    // issued under, and the authenticator refuses any other, so old tokens die with the old password.
    t.integer("token_version").notNullable().defaultTo(0);
    t.timestamp("password_changed_at", { useTz: true });
    t.timestamp("last_login_at", { useTz: true });
    t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`ALTER TABLE users ADD CONSTRAINT users_email_lowercase CHECK (email = lower(email))`);

  await knex.schema.createTable("organizations", (t) => {
    t.text("id").primary(); // org_<random>
    t.text("name").notNullable();
    t.text("slug").notNullable().unique();
    t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  // {0,1} rather than "?": knex.raw reads every "?" as a binding placeholder.
  await knex.raw(
    `ALTER TABLE organizations ADD CONSTRAINT organizations_slug_shape CHECK (slug ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9]){0,1}$')`,
  );

  await knex.schema.createTable("projects", (t) => {
    t.text("id").primary(); // prj_<random>
    // RESTRICT: an organization is deleted only once it has no projects (the API says 409 first).
    t.text("organization_id").notNullable().references("id").inTable("organizations").onDelete("RESTRICT");
    t.text("name").notNullable();
    t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(["organization_id", "name"]);
    // Target of the memberships' composite key: a project membership names the project's own organization.
    t.unique(["id", "organization_id"]);
  });

  await knex.schema.createTable("memberships", (t) => {
    t.bigIncrements("id");
    t.text("user_id").notNullable().references("id").inTable("users").onDelete("CASCADE");
    t.text("organization_id").notNullable().references("id").inTable("organizations").onDelete("CASCADE");
    t.text("project_id"); // null: a membership of the organization itself
    t.text("role").notNullable();
    t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.foreign(["project_id", "organization_id"])
      .references(["id", "organization_id"])
      .inTable("projects")
      .onDelete("CASCADE");
    t.index(["organization_id"]);
    t.index(["project_id"]);
  });
  await knex.raw(`
    ALTER TABLE memberships ADD CONSTRAINT memberships_role_fits_level CHECK (
      (role = 'org_admin' AND project_id IS NULL) OR
      (role = 'project_admin' AND project_id IS NOT NULL) OR
      role = 'member'
    );
    CREATE UNIQUE INDEX memberships_one_per_organization ON memberships (user_id, organization_id) WHERE project_id IS NULL;
    CREATE UNIQUE INDEX memberships_one_per_project ON memberships (user_id, project_id) WHERE project_id IS NOT NULL;
  `);

  // Failed sign-ins, counted in a sliding window by the login throttle (api/src/domain/identity/throttle.ts). In
  // Postgres rather than memory so that every API replica counts the same failures.
  await knex.schema.createTable("login_failures", (t) => {
    t.bigIncrements("id");
    t.text("email").notNullable(); // as typed, lowercased; the account need not exist
    t.text("source").notNullable(); // client address
    t.timestamp("at", { useTz: true }).notNullable();
    t.index(["email", "source", "at"]);
    t.index(["source", "at"]);
    t.index(["email", "at"]);
    t.index(["at"]);
  });

  // One row per one-time start-up step that must never run twice on a database (the bootstrap admin).
  await knex.schema.createTable("bootstrap_markers", (t) => {
    t.text("name").primary();
    t.timestamp("done_at", { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.jsonb("details").notNullable().defaultTo("{}");
  });
}
