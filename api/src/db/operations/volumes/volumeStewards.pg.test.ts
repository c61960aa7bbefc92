// Who hears that a project's volume is nearly full: the project's administrators, else the organization's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db.test-support.ts";
import { volumeStewards } from "./volumeStewards.ts";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
}, 60_000);
afterAll(async () => t?.drop());

describe("volumeStewards", () => {
  it("names the project's administrators, and the organization's when the project has none", async () => {
    const db = t.db;
    await db("organizations").insert([{ id: "org_s", name: "S", slug: "s" }]);
    await db("projects").insert([
      { id: "prj_with", organization_id: "org_s", name: "with" },
      { id: "prj_none", organization_id: "org_s", name: "none" },
    ]);
    await db("users").insert(
      ["usr_padmin", "usr_oadmin", "usr_member"].map((id) => ({ id, email: `${id}@s.test`, password_hash: "x" })),
    );
    await db("memberships").insert([
      { user_id: "usr_padmin", organization_id: "org_s", project_id: "prj_with", role: "project_admin" },
      { user_id: "usr_member", organization_id: "org_s", project_id: "prj_with", role: "member" },
      { user_id: "usr_member", organization_id: "org_s", project_id: "prj_none", role: "member" },
      { user_id: "usr_oadmin", organization_id: "org_s", role: "org_admin" },
    ]);
    expect(await volumeStewards(db, { organizationId: "org_s", projectId: "prj_with" })).toEqual(["usr_padmin"]);
    expect(await volumeStewards(db, { organizationId: "org_s", projectId: "prj_none" })).toEqual(["usr_oadmin"]);
  });
});
