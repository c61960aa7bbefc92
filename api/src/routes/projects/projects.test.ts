import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  itBehavesPerRole,
  type RouteCase,
  startIdentityTestApi,
} from "../../domain/identity/identity.test-support.ts";

describe("/api/v1/projects", () => {
  let t: IdentityTestApi;
  let w: IdentityWorld;
  beforeAll(async () => {
    t = await startIdentityTestApi();
    w = await anIdentityWorld(t);
  });
  afterAll(async () => {
    await t?.stop();
  });

  /** A fresh project of organization A whose project_admin is projectAdminA. */
  const aProjectOfA = async () => {
    const p = await t.aProject(w.orgA.id);
    await t.member(w.projectAdminA, w.orgA.id, p.id, "project_admin");
    return p;
  };
  /** A fresh member of projectA. */
  const aMemberOfProjectA = async () => {
    const u = await t.aUser();
    await t.member(u, w.orgA.id, w.projectA.id, "member");
    return u;
  };

  let n = 0;
  const cases: RouteCase[] = [
    {
      name: "/projects (create)",
      method: "POST",
      path: () => "/api/v1/projects",
      body: (w) => ({ organization_id: w.orgA.id, name: `New project ${n++}` }),
      allowed: [
        { as: "superAdmin", status: 201 },
        { as: "adminA", status: 201 },
      ],
      refused: [
        { as: "adminB", status: 404, why: "another organization's admin" },
        { as: "projectAdminA", status: 403, why: "a project admin, not an organization admin" },
        { as: "orgMemberA", status: 403, why: "a member, not an admin" },
        { as: "outsider", status: 404, why: "no membership" },
      ],
      malformed: { organization_id: 1, name: "" },
    },
    {
      name: "/projects/:id (detail)",
      method: "GET",
      path: (w) => `/api/v1/projects/${w.projectA.id}`,
      allowed: [
        { as: "superAdmin", status: 200 },
        { as: "adminA", status: 200 },
        { as: "projectAdminA", status: 200 },
        { as: "memberA", status: 200 },
      ],
      refused: [
        { as: "adminB", status: 404, why: "another organization's admin" },
        { as: "memberB", status: 404, why: "another organization's member" },
        { as: "orgMemberA", status: 404, why: "a member of the organization, not of this project" },
      ],
    },
    {
      name: "/projects/:id (update)",
      method: "PATCH",
      path: (w) => `/api/v1/projects/${w.projectA.id}`,
      body: () => ({ name: `Project A ${n++}` }),
      allowed: [
        { as: "superAdmin", status: 200 },
        { as: "adminA", status: 200 },
      ],
      refused: [
        { as: "adminB", status: 404, why: "another organization's admin" },
        { as: "projectAdminA", status: 403, why: "a project admin manages members, not the project" },
        { as: "memberA", status: 403, why: "a member reads only" },
      ],
      malformed: { name: "" },
    },
    {
      name: "/projects/:id (delete)",
      method: "DELETE",
      path: async () => `/api/v1/projects/${(await aProjectOfA()).id}`,
      allowed: [
        { as: "superAdmin", status: 204 },
        { as: "adminA", status: 204 },
      ],
      refused: [
        { as: "adminB", status: 404, why: "another organization's admin" },
        { as: "projectAdminA", status: 403, why: "a project admin does not delete the project" },
        { as: "memberB", status: 404, why: "another organization's member" },
      ],
    },
    {
      name: "/projects/:id/members (list)",
      method: "GET",
      path: (w) => `/api/v1/projects/${w.projectA.id}/members`,
      allowed: [
        { as: "superAdmin", status: 200 },
        { as: "adminA", status: 200 },
        { as: "projectAdminA", status: 200 },
        { as: "memberA", status: 200 },
      ],
      refused: [
        { as: "adminB", status: 404, why: "another organization's admin" },
        { as: "orgMemberA", status: 404, why: "a member of the organization, not of this project" },
      ],
    },
    {
      name: "/projects/:id/members (add)",
      method: "POST",
      path: (w) => `/api/v1/projects/${w.projectA.id}/members`,
      body: async () => ({ user_id: (await t.aUser()).id, role: "member" }),
      allowed: [
        { as: "projectAdminA", status: 201 },
        { as: "adminA", status: 201 },
        { as: "superAdmin", status: 201 },
      ],
      refused: [
        { as: "adminB", status: 404, why: "another organization's admin" },
        { as: "memberA", status: 403, why: "a member, not an admin" },
        { as: "memberB", status: 404, why: "another organization's member" },
      ],
      malformed: { user_id: "usr_x", role: "org_admin" },
    },
    {
      name: "/projects/:id/members/:userId (remove)",
      method: "DELETE",
      path: async (w) => `/api/v1/projects/${w.projectA.id}/members/${(await aMemberOfProjectA()).id}`,
      allowed: [
        { as: "projectAdminA", status: 204 },
        { as: "adminA", status: 204 },
      ],
      refused: [
        { as: "adminB", status: 404, why: "another organization's admin" },
        { as: "memberA", status: 403, why: "a member, not an admin" },
      ],
    },
  ];
  itBehavesPerRole(cases, () => ({ t, w }));

  describe("list", () => {
    const ids = async (token: string, query = "") => {
      const r = await t.request("GET", `/api/v1/projects?size=100${query}`, { token });
      expect(r.status).toBe(200);
      return (r.body.data as { id: string }[]).map((p) => p.id);
    };
    it("is every project of the organizations one administers, and one's own projects", async () => {
      const a = await ids(w.adminA.token);
      expect(a).toEqual(expect.arrayContaining([w.projectA.id, w.projectA2.id]));
      expect(a).not.toContain(w.projectB.id);
      expect(await ids(w.memberA.token)).toEqual([w.projectA.id]);
      expect(await ids(w.orgMemberA.token)).toEqual([]);
      expect(await ids(w.outsider.token)).toEqual([]);
      expect(await ids(w.superAdmin.token)).toEqual(expect.arrayContaining([w.projectA.id, w.projectB.id]));
    });
    it("answers the caller's scope, not 403, when asked for another organization", async () => {
      const own = await ids(w.adminA.token);
      expect((await ids(w.adminA.token, `&organization=${w.orgB.id}`)).sort()).toEqual(own.sort());
      expect(await ids(w.superAdmin.token, `&organization=${w.orgB.id}`)).toEqual([w.projectB.id]);
    });
    it("needs a live token", async () => {
      const r = await t.request("GET", "/api/v1/projects", { token: await t.expiredTokenFor(w.memberA.id) });
      expect(r.body.error.code).toBe("token_expired");
    });
  });

  it("refuses a second project of the same name in an organization (409 already_exists)", async () => {
    const r = await t.request("POST", "/api/v1/projects", {
      token: w.adminA.token,
      json: { organization_id: w.orgA.id, name: w.projectA2.name },
    });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("already_exists");
  });

  it("gives a new project member visibility of the project and its organization at once", async () => {
    const u = await t.aUser();
    expect((await t.request("GET", `/api/v1/projects/${w.projectA.id}`, { token: u.token })).status).toBe(404);
    const add = await t.request("POST", `/api/v1/projects/${w.projectA.id}/members`, {
      token: w.projectAdminA.token,
      json: { email: u.email, role: "project_admin" },
    });
    expect(add.status).toBe(201);
    expect(add.body).toMatchObject({
      user_id: u.id,
      project_id: w.projectA.id,
      organization_id: w.orgA.id,
      role: "project_admin",
    });
    expect((await t.request("GET", `/api/v1/projects/${w.projectA.id}`, { token: u.token })).status).toBe(200);
    expect((await t.request("GET", `/api/v1/organizations/${w.orgA.id}`, { token: u.token })).status).toBe(200);
    expect((await t.request("GET", `/api/v1/projects/${w.projectA2.id}`, { token: u.token })).status).toBe(404);
  });

  it("removes the project's memberships with the project", async () => {
    const p = await aProjectOfA();
    expect((await t.request("DELETE", `/api/v1/projects/${p.id}`, { token: w.adminA.token })).status).toBe(204);
    expect(await t.database.db("memberships").where({ project_id: p.id })).toEqual([]);
    expect((await t.request("GET", `/api/v1/projects/${p.id}`, { token: w.adminA.token })).status).toBe(404);
  });
});
