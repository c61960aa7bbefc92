import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  itBehavesPerRole,
  type RouteCase,
  startIdentityTestApi,
} from "../../domain/identity/identity.test-support.ts";

describe("/api/v1/users", () => {
  let t: IdentityTestApi;
  let w: IdentityWorld;
  beforeAll(async () => {
    t = await startIdentityTestApi();
    w = await anIdentityWorld(t);
  });
  afterAll(async () => {
    await t?.stop();
  });

  let n = 0;
  const email = () => `new-${Date.now()}-${n++}@example.test`;
  /** A fresh account that belongs to organization A only. */
  const aUserOfA = async () => {
    const u = await t.aUser();
    await t.member(u, w.orgA.id, null, "member");
    return u;
  };

  const cases: RouteCase[] = [
    {
      name: "/users (create)",
      method: "POST",
      path: () => "/api/v1/users",
      body: (w) => ({ email: email(), password: "a temporary password", organization_id: w.orgA.id }),
      allowed: [
        { as: "superAdmin", status: 201 },
        { as: "adminA", status: 201 },
      ],
      refused: [
        { as: "adminB", status: 404, why: "another organization" },
        { as: "orgMemberA", status: 403, why: "a member, not an admin, of the organization" },
        { as: "projectAdminA", status: 403, why: "a project admin, not an organization admin" },
      ],
      malformed: { email: "not an email", password: "short" },
    },
    {
      name: "/users/:id (detail)",
      method: "GET",
      path: (w) => `/api/v1/users/${w.memberA.id}`,
      allowed: [
        { as: "superAdmin", status: 200 },
        { as: "adminA", status: 200 },
        { as: "projectAdminA", status: 200 },
        { as: "memberA", status: 200 },
      ],
      refused: [
        { as: "adminB", status: 404, why: "another organization" },
        { as: "orgMemberA", status: 404, why: "another user of the same organization" },
        { as: "outsider", status: 404, why: "no membership at all" },
      ],
    },
    {
      name: "/users/:id (update)",
      method: "PATCH",
      path: async () => `/api/v1/users/${(await aUserOfA()).id}`,
      body: () => ({ display_name: "Renamed", disabled: true }),
      allowed: [
        { as: "superAdmin", status: 200 },
        { as: "adminA", status: 200 },
      ],
      refused: [
        { as: "adminB", status: 404, why: "another organization" },
        { as: "orgMemberA", status: 404, why: "another user of the same organization" },
        { as: "memberB", status: 404, why: "another organization" },
      ],
      malformed: { email: 5, disabled: "yes" },
    },
    {
      name: "/users/:id (delete)",
      method: "DELETE",
      path: async () => `/api/v1/users/${(await aUserOfA()).id}`,
      allowed: [
        { as: "superAdmin", status: 204 },
        { as: "adminA", status: 204 },
      ],
      refused: [
        { as: "adminB", status: 404, why: "another organization" },
        { as: "memberA", status: 404, why: "another user of the same organization" },
        { as: "outsider", status: 404, why: "no membership at all" },
      ],
    },
  ];
  itBehavesPerRole(cases, () => ({ t, w }));

  describe("list", () => {
    const ids = async (token: string, query = "") => {
      const r = await t.request("GET", `/api/v1/users${query}`, { token });
      expect(r.status).toBe(200);
      return (r.body.data as { id: string }[]).map((u) => u.id);
    };

    it("is everyone for a super_admin", async () => {
      const r = await t.request("GET", "/api/v1/users?size=100", { token: w.superAdmin.token });
      const [row] = await t.database.db("users").count({ count: "*" });
      expect(r.body.pagination.total).toBe(Number(row?.count));
    });

    it("is the organization's people, and the admin, for an org_admin", async () => {
      const seen = await ids(w.adminA.token, "?size=100");
      expect(seen).toEqual(expect.arrayContaining([w.adminA.id, w.projectAdminA.id, w.memberA.id, w.orgMemberA.id]));
      expect(seen).not.toContain(w.memberB.id);
      expect(seen).not.toContain(w.adminB.id);
      expect(seen).not.toContain(w.outsider.id);
      expect(seen).not.toContain(w.superAdmin.id);
    });

    it("is the project's people for a project_admin, and only oneself for a member", async () => {
      const seen = await ids(w.projectAdminA.token, "?size=100");
      expect(seen.sort()).toEqual([w.projectAdminA.id, w.memberA.id].sort());
      expect(await ids(w.memberA.token)).toEqual([w.memberA.id]);
      expect(await ids(w.outsider.token)).toEqual([w.outsider.id]);
    });

    it("answers the caller's scope, not 403, when asked for another organization", async () => {
      const own = await ids(w.adminA.token, "?size=100");
      const asked = await ids(w.adminA.token, `?size=100&organization=${w.orgB.id}`);
      expect(asked.sort()).toEqual(own.sort());
      expect(asked).not.toContain(w.memberB.id);
      const asProject = await ids(w.memberA.token, `?project=${w.projectB.id}`);
      expect(asProject).toEqual([w.memberA.id]);
    });

    it("narrows by an organization in scope and by email prefix", async () => {
      const all = await ids(w.superAdmin.token, `?size=100&organization=${w.orgB.id}`);
      expect(all.sort()).toEqual([w.adminB.id, w.memberB.id].sort());
      const prefix = w.memberA.email.slice(0, 18);
      expect(await ids(w.adminA.token, `?email=${encodeURIComponent(prefix)}`)).toContain(w.memberA.id);
    });

    it("pages: page and size, with the total", async () => {
      const r = await t.request("GET", "/api/v1/users?page=2&size=2", { token: w.superAdmin.token });
      expect(r.body.pagination).toMatchObject({ page: 2, size: 2 });
      expect(r.body.data).toHaveLength(2);
      const bad = await t.request("GET", "/api/v1/users?size=1000", { token: w.superAdmin.token });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe("validation_failed");
    });

    it("pages to the last page, past the end and over nobody with the right total", async () => {
      const inB = (qs: string) =>
        t.request("GET", `/api/v1/users?organization=${w.orgB.id}&${qs}`, { token: w.superAdmin.token });
      const last = await inB("page=2&size=1");
      expect(last.body.pagination).toEqual({ page: 2, size: 1, total: 2 });
      expect(last.body.data).toHaveLength(1);
      expect((await inB("page=5&size=1")).body).toEqual({ data: [], pagination: { page: 5, size: 1, total: 2 } });
      for (const page of [1, 3]) {
        const nobody = await t.request("GET", `/api/v1/users?email=nobody-at-all-&page=${page}`, {
          token: w.superAdmin.token,
        });
        expect(nobody.body).toEqual({ data: [], pagination: { page, size: 20, total: 0 } });
      }
    });

    it("needs a live token", async () => {
      const r = await t.request("GET", "/api/v1/users", { token: await t.expiredTokenFor(w.adminA.id) });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe("token_expired");
    });
  });

  describe("create", () => {
    it("makes an account that must change its password, in the admin's organization", async () => {
      const e = email();
      const r = await t.request("POST", "/api/v1/users", {
        token: w.adminA.token,
        json: {
          email: e.toUpperCase(),
          password: "a temporary password",
          organization_id: w.orgA.id,
          role: "org_admin",
          display_name: "Ada",
        },
      });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({
        email: e,
        display_name: "Ada",
        must_change_password: true,
        is_super_admin: false,
        memberships: [{ organization_id: w.orgA.id, project_id: null, role: "org_admin" }],
      });
      expect(r.body).not.toHaveProperty("password_hash");
      const login = await t.request("POST", "/api/v1/auth/login", {
        json: { email: e, password: "a temporary password" },
      });
      expect(login.body.must_change_password).toBe(true);
    });

    it("refuses an email in use with 409 already_exists", async () => {
      const r = await t.request("POST", "/api/v1/users", {
        token: w.superAdmin.token,
        json: { email: w.memberA.email, password: "a temporary password" },
      });
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe("already_exists");
    });

    it("lets only a super_admin make a super_admin or an account outside any organization", async () => {
      const su = await t.request("POST", "/api/v1/users", {
        token: w.adminA.token,
        json: { email: email(), password: "a temporary password", organization_id: w.orgA.id, is_super_admin: true },
      });
      expect(su.status).toBe(403);
      const loose = await t.request("POST", "/api/v1/users", {
        token: w.adminA.token,
        json: { email: email(), password: "a temporary password" },
      });
      expect(loose.status).toBe(403);
      const bySuper = await t.request("POST", "/api/v1/users", {
        token: w.superAdmin.token,
        json: { email: email(), password: "a temporary password", is_super_admin: true },
      });
      expect(bySuper.status).toBe(201);
      expect(bySuper.body.is_super_admin).toBe(true);
    });

    it("replays an Idempotency-Key instead of creating twice", async () => {
      const json = { email: email(), password: "a temporary password", organization_id: w.orgA.id };
      const headers = { "Idempotency-Key": `create-user-${Date.now()}` };
      const a = await t.request("POST", "/api/v1/users", { token: w.adminA.token, json, headers });
      const b = await t.request("POST", "/api/v1/users", { token: w.adminA.token, json, headers });
      expect(a.status).toBe(201);
      expect(b.status).toBe(201);
      expect(b.body.id).toBe(a.body.id);
      expect(b.headers.get("Idempotent-Replayed")).toBe("true");
    });
  });

  describe("update", () => {
    it("lets people change their own display name but nothing an administrator sets", async () => {
      const u = await aUserOfA();
      const ok = await t.request("PATCH", `/api/v1/users/${u.id}`, { token: u.token, json: { display_name: "Me" } });
      expect(ok.status).toBe(200);
      expect(ok.body.display_name).toBe("Me");
      for (const json of [
        { disabled: true },
        { email: email() },
        { is_super_admin: true },
        { password: "a new password here" },
      ]) {
        const r = await t.request("PATCH", `/api/v1/users/${u.id}`, { token: u.token, json });
        expect(r.status, JSON.stringify(json)).toBe(403);
      }
    });

    it("refuses an organization admin an account shared with another organization (403)", async () => {
      const shared = await aUserOfA();
      await t.member(shared, w.orgB.id, null, "member");
      const r = await t.request("PATCH", `/api/v1/users/${shared.id}`, {
        token: w.adminA.token,
        json: { disabled: true },
      });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe("forbidden");
    });

    it("refuses a project admin the accounts of its members (visible, not theirs to change)", async () => {
      const r = await t.request("PATCH", `/api/v1/users/${w.memberA.id}`, {
        token: w.projectAdminA.token,
        json: { display_name: "x" },
      });
      expect(r.status).toBe(403);
    });

    it("resets a password: the old tokens die and the user must change it", async () => {
      const u = await aUserOfA();
      const r = await t.request("PATCH", `/api/v1/users/${u.id}`, {
        token: w.adminA.token,
        json: { password: "a reset password 1" },
      });
      expect(r.status).toBe(200);
      expect(r.body.must_change_password).toBe(true);
      expect((await t.request("GET", "/api/v1/auth/me", { token: u.token })).status).toBe(401);
      const login = await t.request("POST", "/api/v1/auth/login", {
        json: { email: u.email, password: "a reset password 1" },
      });
      expect(login.body.must_change_password).toBe(true);
    });

    it("disabling revokes the account's tokens at once", async () => {
      const u = await aUserOfA();
      await t.request("PATCH", `/api/v1/users/${u.id}`, { token: w.adminA.token, json: { disabled: true } });
      expect((await t.request("GET", "/api/v1/auth/me", { token: u.token })).status).toBe(401);
    });

    it("will not let a super_admin demote or disable itself", async () => {
      const su = await t.aUser({ superAdmin: true });
      expect(
        (await t.request("PATCH", `/api/v1/users/${su.id}`, { token: su.token, json: { is_super_admin: false } }))
          .status,
      ).toBe(409);
      expect(
        (await t.request("PATCH", `/api/v1/users/${su.id}`, { token: su.token, json: { disabled: true } })).status,
      ).toBe(409);
    });
  });

  describe("delete", () => {
    it("removes the account and its memberships; nobody deletes themselves", async () => {
      const u = await aUserOfA();
      expect((await t.request("DELETE", `/api/v1/users/${u.id}`, { token: w.adminA.token })).status).toBe(204);
      expect((await t.request("GET", `/api/v1/users/${u.id}`, { token: w.adminA.token })).status).toBe(404);
      expect(await t.database.db("memberships").where({ user_id: u.id })).toEqual([]);
      const self = await t.request("DELETE", `/api/v1/users/${w.adminA.id}`, { token: w.adminA.token });
      expect(self.status).toBe(409);
    });

    it("refuses an organization admin a super_admin's account", async () => {
      const su = await t.aUser({ superAdmin: true });
      await t.member(su, w.orgA.id, null, "member");
      const r = await t.request("DELETE", `/api/v1/users/${su.id}`, { token: w.adminA.token });
      expect(r.status).toBe(403);
    });
  });

  // Found by fuzzing the OpenAPI document (docs/dev/testing.md): a stolen super_admin token reset its own
  // password without the current one, and revoked the owner's other sessions.
  describe("one's own password", () => {
    it.each([
      ["super_admin", { superAdmin: true }],
      ["member", {}],
    ] as const)("changes only at /auth/password, with the current one, even for a %s", async (_, opts) => {
      const u = await t.aUser(opts);
      await t.member(u, w.orgA.id, null, "member");
      const r = await t.request("PATCH", `/api/v1/users/${u.id}`, {
        token: u.token,
        json: { password: "a takeover password 1" },
      });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe("current_password_required");
      expect(r.body.error.details.endpoint).toBe("/api/v1/auth/password");
      // Nothing changed: the token still works and the old password still signs in.
      expect((await t.request("GET", "/api/v1/auth/me", { token: u.token })).status).toBe(200);
      const old = await t.request("POST", "/api/v1/auth/login", { json: { email: u.email, password: u.password } });
      expect(old.status).toBe(200);
      const taken = await t.request("POST", "/api/v1/auth/login", {
        json: { email: u.email, password: "a takeover password 1" },
      });
      expect(taken.status).toBe(401);
    });
  });

  describe("weak passwords", () => {
    it.each([
      ["000000000000", "repeated_characters"],
      ["123456789012", "sequence"],
      ["Password1234", "common_password"],
      ["qwertyuiop12", "common_password"],
    ])("%s is refused on create and on reset, saying why (%s)", async (password, code) => {
      const created = await t.request("POST", "/api/v1/users", {
        token: w.adminA.token,
        json: { email: email(), password, organization_id: w.orgA.id },
      });
      expect(created.status).toBe(400);
      expect(created.body.error.details.issues).toEqual([
        expect.objectContaining({ path: ["body", "password"], code, message: expect.any(String) }),
      ]);
      const u = await aUserOfA();
      const reset = await t.request("PATCH", `/api/v1/users/${u.id}`, { token: w.adminA.token, json: { password } });
      expect(reset.status).toBe(400);
      expect(reset.body.error.details.issues[0].code).toBe(code);
      const me = await t.request("POST", "/api/v1/auth/password", {
        token: u.token,
        json: { current_password: u.password, new_password: password },
      });
      expect(me.status).toBe(400);
      expect(me.body.error.details.issues[0]).toMatchObject({ path: ["body", "new_password"], code });
      // The account is untouched: the old password still signs in.
      expect(
        (await t.request("POST", "/api/v1/auth/login", { json: { email: u.email, password: u.password } })).status,
      ).toBe(200);
    });
  });
});
