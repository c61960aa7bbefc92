// 20261129160000 on real Postgres: grants made before it keep their ids and meaning (an organization's, a
// project's), grants naming nothing are dropped; a grant names exactly one of an organization, a project
// and a person, and goes with what it names; a person in no organization does not count for placement;
// the down migration takes the table back to its earlier shape.
import type { Knex } from "knex";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../db.test-support.ts";
import { migrateLatest } from "../knex.ts";
import { nodePoolRefs } from "../operations/nodePools/nodePools.ts";
import { migrations } from "./index.ts";

const USER_GRANTS = "20261129160000_node_pool_user_grants";
const at = new Date("2026-11-29T10:00:00Z");

let t: TestDatabase;
const before = migrations.slice(
  0,
  migrations.findIndex((m) => m.name === USER_GRANTS),
);

async function migrateTo(db: Knex, list: typeof migrations) {
  await db.migrate.latest({
    migrationSource: {
      getMigrations: async () => list,
      getMigrationName: (m: (typeof list)[number]) => m.name,
      getMigration: async (m: (typeof list)[number]) => ({ up: m.up, down: async () => {} }),
    },
  });
}

const grants = (db: Knex) => db("node_pool_grants").orderBy("id").select("id", "pool_id", "grantee_kind", "grantee_id");

beforeAll(async () => {
  t = await createTestDatabase({ migrate: false });
  await migrateTo(t.db, before);
  const db = t.db;
  await db("clusters").insert({ id: "clu_g", name: "g", session_domain: "g.test" });
  await db("organizations").insert({ id: "org_lab", name: "Lab", slug: "lab" });
  await db("projects").insert({ id: "prj_thesis", organization_id: "org_lab", name: "Thesis" });
  await db("node_pools").insert({
    id: "npl_a",
    cluster_id: "clu_g",
    name: "a",
    label_key: "berth.dev/pool",
    label_values: ["a"],
    created_at: at,
    updated_at: at,
  });
  await db("node_pool_grants").insert([
    { id: "npg_1", pool_id: "npl_a", grantee_kind: "organization", grantee_id: "org_lab", created_at: at },
    { id: "npg_2", pool_id: "npl_a", grantee_kind: "project", grantee_id: "prj_thesis", created_at: at },
    { id: "npg_3", pool_id: "npl_a", grantee_kind: "organization", grantee_id: "org_gone", created_at: at },
  ]);
  await migrateLatest(db);
}, 120_000);
afterAll(async () => t?.drop());

const aPerson = (db: Knex, id: string) =>
  db("users").insert({ id, email: `${id.replace("usr_", "")}@x.test`, password_hash: "x" });

describe(USER_GRANTS, () => {
  it("keeps earlier grants with their ids and meaning, and drops the one that named nothing", async () => {
    expect(await grants(t.db)).toEqual([
      { id: "npg_1", pool_id: "npl_a", grantee_kind: "organization", grantee_id: "org_lab" },
      { id: "npg_2", pool_id: "npl_a", grantee_kind: "project", grantee_id: "prj_thesis" },
    ]);
    expect(await t.db("node_pool_grants").where({ id: "npg_1" }).first()).toMatchObject({
      organization_id: "org_lab",
      project_id: null,
      user_id: null,
    });
  });

  it("names exactly one grantee per grant", async () => {
    await aPerson(t.db, "usr_pi");
    const row = (id: string, g: Record<string, string>) => ({ id, pool_id: "npl_a", created_at: at, ...g });
    await t.db("node_pool_grants").insert(row("npg_pi", { user_id: "usr_pi" }));
    expect(await t.db("node_pool_grants").where({ id: "npg_pi" }).first()).toMatchObject({
      grantee_kind: "user",
      grantee_id: "usr_pi",
    });
    await expect(t.db("node_pool_grants").insert(row("npg_none", {}))).rejects.toThrow(/node_pool_grants_one_grantee/);
    await expect(
      t.db("node_pool_grants").insert(row("npg_two", { user_id: "usr_pi", organization_id: "org_lab" })),
    ).rejects.toThrow(/node_pool_grants_one_grantee/);
    await expect(t.db("node_pool_grants").insert(row("npg_nobody", { user_id: "usr_nobody" }))).rejects.toThrow(
      /foreign key/,
    );
    await expect(t.db("node_pool_grants").insert(row("npg_again", { user_id: "usr_pi" }))).rejects.toThrow(
      /node_pool_grants_grantee/,
    );
  });

  it("counts a person's grant for placement only while they belong to an organization", async () => {
    const refs = async () => (await nodePoolRefs(t.db)).find((p) => p.id === "npl_a")?.grantees;
    expect(await refs()).toEqual(["organization:org_lab", "project:prj_thesis"]);
    await t.db("memberships").insert({ user_id: "usr_pi", organization_id: "org_lab", role: "member" });
    expect(await refs()).toEqual(["organization:org_lab", "project:prj_thesis", "user:usr_pi"]);
    await t.db("memberships").where({ user_id: "usr_pi" }).delete();
    expect(await refs()).toEqual(["organization:org_lab", "project:prj_thesis"]);
  });

  it("drops a person's grant with their account", async () => {
    await aPerson(t.db, "usr_leaver");
    await t
      .db("node_pool_grants")
      .insert({ id: "npg_leaver", pool_id: "npl_a", user_id: "usr_leaver", created_at: at });
    await t.db("users").where({ id: "usr_leaver" }).delete();
    expect(await t.db("node_pool_grants").where({ id: "npg_leaver" }).first()).toBeUndefined();
  });
});
