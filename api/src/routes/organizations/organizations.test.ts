import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  itBehavesPerRole,
  type RouteCase,
  startIdentityTestApi,
} from "../../domain/identity/identity.test-support.ts";

describe("/api/v1/organizations", () => {
  let t: IdentityTestApi;
  let w: IdentityWorld;
  beforeAll(async () => {
    t = await startIdentityTestApi();
    w = await anIdentityWorld(t);
  });
  afterAll(async () => {
    await t?.stop();
  });

  /** A fresh organization administered by adminA (for destructive cases). */
  const anOrgOfAdminA = async () => {
    const o = await t.anOrganization();
    await t.member(w.adminA, o.id, null, "org_admin");
    return o;
  };
  /** A fresh member of organization A. */
  const aMemberOfA = async () => {
    const u = await t.aUser();
    await t.member(u, w.orgA.id, null, "member");
    return u;
  };

  const cases: RouteCase[] = [
    {
      name: "/organizations (create)",
      method: "POST",
      path: () => "/api/v1/organizations",
      body: () => ({ name: `New Org ${Math.random()}` }),
      allowed: [{ as: "superAdmin", status: 201 }],
      refused: [
        { as: "adminA", status: 403, why: "an org_admin does not create organizations" },
        { as: "memberA", status: 403, why: "a member does not create organizations" },
      ],
      malformed: { name: "", slug: "Not A Slug" },
    },
    {
      name: "/organizations/:id (detail)",
      method: "GET",
      path: (w) => `/api/v1/organizations/${w.orgA.id}`,
      allowed: [
        { as: "superAdmin", status: 200 },
        { as: "adminA", status: 200 },
        { as: "orgMemberA", status: 200 },
        { as: "memberA", status: 200 },
      ],
      refused: [
        { as: "adminB", status: 404, why: "another organization's admin" },
        { as: "memberB", status: 404, why: "another organization's member" },
        { as: "outsider", status: 404, why: "no membership" },
      ],
    },
    {
      name: "/organizations/:id (update)",
      method: "PATCH",
      path: (w) => `/api/v1/organizations/${w.orgA.id}`,
      body: () => ({ name: "Org A renamed" }),
      allowed: [
        { as: "superAdmin", status: 200 },
        { as: "adminA", status: 200 },
      ],
      refused: [
        { as: "adminB", status: 404, why: "another organization's admin" },
        { as: "orgMemberA", status: 403, why: "a member, not an admin" },
        { as: "projectAdminA", status: 403, why: "a project admin, not an organization admin" },
      ],
      malformed: { slug: "Not A Slug", name: 7 },
    },
    {
      name: "/organizations/:id (delete)",
      method: "DELETE",
      path: async () => `/api/v1/organizations/${(await anOrgOfAdminA()).id}`,
      allowed: [{ as: "superAdmin", status: 204 }],
      refused: [
        { as: "adminA", status: 403, why: "only a super_admin deletes organizations" },
        { as: "adminB", status: 404, why: "another organization's admin" },
      ],
    },
    {
      name: "/organizations/:id/members (list)",
      method: "GET",
      path: (w) => `/api/v1/organizations/${w.orgA.id}/members`,
      allowed: [
        { as: "superAdmin", status: 200 },
        { as: "adminA", status: 200 },
        { as: "orgMemberA", status: 200 },
      ],
      refused: [
        { as: "adminB", status: 404, why: "another organization's admin" },
        { as: "outsider", status: 404, why: "no membership" },
      ],
    },
    {
      name: "/organizations/:id/members (add)",
      method: "POST",
      path: (w) => `/api/v1/organizations/${w.orgA.id}/members`,
      body: async () => ({ user_id: (await t.aUser()).id, role: "member" }),
      allowed: [
        { as: "adminA", status: 201 },
        { as: "superAdmin", status: 201 },
      ],
      refused: [
        { as: "adminB", status: 404, why: "another organization's admin" },
        { as: "orgMemberA", status: 403, why: "a member, not an admin" },
        { as: "projectAdminA", status: 403, why: "a project admin, not an organization admin" },
      ],
      malformed: { user_id: "x", role: "king" },
    },
    {
      name: "/organizations/:id/members/:userId (remove)",
      method: "DELETE",
      path: async (w) => `/api/v1/organizations/${w.orgA.id}/members/${(await aMemberOfA()).id}`,
      allowed: [
        { as: "adminA", status: 204 },
        { as: "superAdmin", status: 204 },
      ],
      refused: [
        { as: "adminB", status: 404, why: "another organization's admin" },
        { as: "orgMemberA", status: 403, why: "a member, not an admin" },
      ],
    },
  ];
  itBehavesPerRole(cases, () => ({ t, w }));

  describe("list", () => {
    const ids = async (token: string) => {
      const r = await t.request("GET", "/api/v1/organizations?size=100", { token });
      expect(r.status).toBe(200);
      return (r.body.data as { id: string }[]).map((o) => o.id);
    };
    it("is every organization for a super_admin, one's own for everyone else", async () => {
      const all = await ids(w.superAdmin.token);
      expect(all).toEqual(expect.arrayContaining([w.orgA.id, w.orgB.id]));
      expect(await ids(w.orgMemberA.token)).toEqual([w.orgA.id]);
      expect(await ids(w.memberA.token)).toEqual([w.orgA.id]);
      expect(await ids(w.memberB.token)).toEqual([w.orgB.id]);
      expect(await ids(w.outsider.token)).toEqual([]);
    });
    it("needs a live token", async () => {
      const r = await t.request("GET", "/api/v1/organizations", { token: await t.expiredTokenFor(w.adminA.id) });
      expect(r.body.error.code).toBe("token_expired");
    });
  });

  it("makes a slug from the name and refuses a taken one with 409 already_exists", async () => {
    const r = await t.request("POST", "/api/v1/organizations", {
      token: w.superAdmin.token,
      json: { name: "Acme Research, Inc." },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      name: "Acme Research, Inc.",
      slug: "acme-research-inc",
      id: expect.stringMatching(/^org_[a-z0-9]{20}$/),
    });
    const again = await t.request("POST", "/api/v1/organizations", {
      token: w.superAdmin.token,
      json: { name: "Acme Research Inc" },
    });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("already_exists");
  });

  it("will not delete an organization that still has projects (409)", async () => {
    const o = await anOrgOfAdminA();
    await t.aProject(o.id);
    const r = await t.request("DELETE", `/api/v1/organizations/${o.id}`, { token: w.superAdmin.token });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("conflict");
  });

  describe("members", () => {
    it("adds by email, changes a role with a second add, and removes from the projects too", async () => {
      const u = await t.aUser();
      const add = await t.request("POST", `/api/v1/organizations/${w.orgA.id}/members`, {
        token: w.adminA.token,
        json: { email: u.email.toUpperCase(), role: "member" },
      });
      expect(add.status).toBe(201);
      expect(add.body).toMatchObject({
        user_id: u.id,
        email: u.email,
        organization_id: w.orgA.id,
        project_id: null,
        role: "member",
      });
      const promote = await t.request("POST", `/api/v1/organizations/${w.orgA.id}/members`, {
        token: w.adminA.token,
        json: { user_id: u.id, role: "org_admin" },
      });
      expect(promote.status).toBe(200);
      expect(promote.body.role).toBe("org_admin");

      await t.member(u, w.orgA.id, w.projectA.id, "member");
      const del = await t.request("DELETE", `/api/v1/organizations/${w.orgA.id}/members/${u.id}`, {
        token: w.adminA.token,
      });
      expect(del.status).toBe(204);
      expect(await t.database.db("memberships").where({ user_id: u.id })).toEqual([]);
      const again = await t.request("DELETE", `/api/v1/organizations/${w.orgA.id}/members/${u.id}`, {
        token: w.adminA.token,
      });
      expect(again.status).toBe(404);
    });

    it("answers 404 for an unknown user and 400 for a project-only role", async () => {
      const unknown = await t.request("POST", `/api/v1/organizations/${w.orgA.id}/members`, {
        token: w.adminA.token,
        json: { email: "nobody@example.test", role: "member" },
      });
      expect(unknown.status).toBe(404);
      const role = await t.request("POST", `/api/v1/organizations/${w.orgA.id}/members`, {
        token: w.adminA.token,
        json: { user_id: w.outsider.id, role: "project_admin" },
      });
      expect(role.status).toBe(400);
      const both = await t.request("POST", `/api/v1/organizations/${w.orgA.id}/members`, {
        token: w.adminA.token,
        json: { role: "member" },
      });
      expect(both.status).toBe(400);
    });

    it("lists the organization-level members with their roles", async () => {
      const r = await t.request("GET", `/api/v1/organizations/${w.orgA.id}/members?size=100`, {
        token: w.orgMemberA.token,
      });
      const byUser = Object.fromEntries(
        (r.body.data as { user_id: string; role: string }[]).map((m) => [m.user_id, m.role]),
      );
      expect(byUser[w.adminA.id]).toBe("org_admin");
      expect(byUser[w.orgMemberA.id]).toBe("member");
      expect(byUser[w.memberB.id]).toBeUndefined();
    });
  });
});
