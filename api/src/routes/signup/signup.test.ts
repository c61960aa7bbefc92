// Public sign-up under each policy, and the approval queue, over HTTP with the real API and database.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grantToOrganization } from "../../domain/credits/grant.ts";
import { checkLedgerInvariants } from "../../domain/credits/invariants.ts";
import { welcomeKey } from "../../domain/credits/welcome.ts";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  startIdentityTestApi,
} from "../../domain/identity/identity.test-support.ts";

const PASSWORD = "a long enough password";

describe("sign-up", () => {
  let t: IdentityTestApi;
  let w: IdentityWorld;
  const signUp = (email: string, extra: Record<string, unknown> = {}) =>
    t.request("POST", "/api/v1/auth/signup", { json: { email, password: PASSWORD, ...extra } });
  const login = (email: string) => t.request("POST", "/api/v1/auth/login", { json: { email, password: PASSWORD } });
  const policy = async (signup: Record<string, unknown>) => {
    const r = await t.request("PATCH", "/api/v1/system/settings", { token: w.superAdmin.token, json: { signup } });
    expect(r.status).toBe(200);
  };

  beforeAll(async () => {
    t = await startIdentityTestApi();
    w = await anIdentityWorld(t);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("is refused while the policy is closed (the default), and the refusal is audited", async () => {
    const r = await signUp("someone@example.org");
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ code: "signup_closed", details: { policy: "closed" } });
    const audit = await t.request("GET", "/api/v1/audit-logs?action=auth.signup", { token: w.superAdmin.token });
    expect(audit.body.data[0]).toMatchObject({ outcome: "denied", diff: { after: { password: "[redacted]" } } });
  });

  it("open: the account is active at once and joins the configured organization; other domains are refused", async () => {
    await policy({ policy: "open", allowed_domains: ["example.org"], organization_id: w.orgA.id });
    const other = await signUp("someone@elsewhere.test");
    expect(other.status).toBe(403);
    expect(other.body.error.details.allowed_domains).toEqual(["example.org"]);
    const r = await signUp("Open.Person@Example.org", { display_name: "Open Person" });
    expect(r.status).toBe(201);
    expect(r.body.status).toBe("active");
    const l = await login("open.person@example.org");
    expect(l.status).toBe(200);
    const me = await t.request("GET", "/api/v1/auth/me", { token: l.body.access_token });
    expect(me.body.memberships).toEqual([expect.objectContaining({ organization_id: w.orgA.id, role: "member" })]);
    const again = await signUp("open.person@example.org");
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("already_exists");
  });

  it("approval: the account waits, disabled, until a super_admin approves; a denied one stays out", async () => {
    await policy({ policy: "approval", allowed_domains: [] });
    const a = await signUp("waiting@any.test");
    const b = await signUp("refused@any.test");
    expect([a.body.status, b.body.status]).toEqual(["pending_approval", "pending_approval"]);
    expect((await login("waiting@any.test")).status).not.toBe(200);

    const queue = await t.request("GET", "/api/v1/signup-requests?status=pending", { token: w.superAdmin.token });
    expect(queue.body.data.map((x: { email: string }) => x.email).sort()).toEqual([
      "refused@any.test",
      "waiting@any.test",
    ]);
    // Scope, not 403: an organization admin sees an empty queue and may not decide (BOLA).
    const theirs = await t.request("GET", "/api/v1/signup-requests", { token: w.adminA.token });
    expect(theirs.body).toMatchObject({ data: [], pagination: { total: 0 } });
    const notTheirs = await t.request("POST", `/api/v1/signup-requests/${a.body.user_id}/approve`, {
      token: w.adminA.token,
    });
    expect(notTheirs.status).toBe(403);

    const ok = await t.request("POST", `/api/v1/signup-requests/${a.body.user_id}/approve`, {
      token: w.superAdmin.token,
    });
    expect(ok.body).toMatchObject({ status: "approved", decided_by: w.superAdmin.id, organization_id: w.orgA.id });
    expect((await login("waiting@any.test")).status).toBe(200);
    const no = await t.request("POST", `/api/v1/signup-requests/${b.body.user_id}/deny`, { token: w.superAdmin.token });
    expect(no.body.status).toBe("denied");
    expect((await login("refused@any.test")).status).not.toBe(200);
    const twice = await t.request("POST", `/api/v1/signup-requests/${b.body.user_id}/approve`, {
      token: w.superAdmin.token,
    });
    expect(twice.status).toBe(404);
  });

  it("approval keeps a role an administrator gave the waiting account", async () => {
    await policy({ policy: "approval", allowed_domains: [], organization_id: w.orgA.id });
    const r = await signUp("future.admin@any.test");
    const add = await t.request("POST", `/api/v1/organizations/${w.orgA.id}/members`, {
      token: w.superAdmin.token,
      json: { user_id: r.body.user_id, role: "org_admin" },
    });
    expect(add.status).toBeLessThan(300);
    const ok = await t.request("POST", `/api/v1/signup-requests/${r.body.user_id}/approve`, {
      token: w.superAdmin.token,
    });
    expect(ok.body.status).toBe("approved");
    const l = await login("future.admin@any.test");
    const me = await t.request("GET", "/api/v1/auth/me", { token: l.body.access_token });
    expect(me.body.memberships).toEqual([expect.objectContaining({ organization_id: w.orgA.id, role: "org_admin" })]);
  });

  it("pays the organization's welcome credit: at once when open, on approval otherwise, and says so when it cannot", async () => {
    const C = 1_000_000n;
    const org = await t.anOrganization("Welcoming");
    const admin = await t.aUser();
    await t.member(admin, org.id, null, "org_admin");
    await grantToOrganization(t.database.db, {
      organizationId: org.id,
      amount: 5n * C,
      actorKind: "system",
      actorId: null,
      reason: "test",
      at: t.clock.now(),
    });
    const set = await t.request("PUT", `/api/v1/organizations/${org.id}/welcome-credit`, {
      token: admin.token,
      json: { amount: String(2n * C) },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const walletOf = async (kind: "user" | "organization", ownerId: string) =>
      BigInt(
        (
          await t.database
            .db("wallets")
            .where({ organization_id: org.id, owner_kind: kind, owner_id: ownerId })
            .first("balance")
        )?.balance ?? 0,
      );

    await policy({ policy: "open", allowed_domains: [], organization_id: org.id });
    const open = await signUp("welcomed.open@any.test");
    expect(open.status).toBe(201);
    expect(await walletOf("user", open.body.user_id)).toBe(2n * C);
    const paid = await t.database
      .db("ledger_transactions")
      .where({ idempotency_key: welcomeKey(org.id, open.body.user_id) });
    expect(paid).toEqual([expect.objectContaining({ kind: "allocation", amount: "2000000", actor_kind: "system" })]);

    await policy({ policy: "approval", allowed_domains: [], organization_id: org.id });
    const waiting = await signUp("welcomed.later@any.test");
    expect(await walletOf("user", waiting.body.user_id)).toBe(0n);
    await t.request("POST", `/api/v1/signup-requests/${waiting.body.user_id}/approve`, { token: w.superAdmin.token });
    expect(await walletOf("user", waiting.body.user_id)).toBe(2n * C);
    expect(await walletOf("organization", org.id)).toBe(1n * C);

    // One credit left: the next account joins unpaid, and the organization's administrator is told.
    await policy({ policy: "open", allowed_domains: [], organization_id: org.id });
    const unpaid = await signUp("welcomed.unpaid@any.test");
    expect(unpaid.status).toBe(201);
    expect(await walletOf("user", unpaid.body.user_id)).toBe(0n);
    expect(await walletOf("organization", org.id)).toBe(1n * C);
    const told = await t.database.db("notifications").where({ user_id: admin.id, kind: "credits.welcome_unpaid" });
    expect(told).toEqual([expect.objectContaining({ body: expect.stringContaining("welcomed.unpaid@any.test") })]);
    expect(await checkLedgerInvariants(t.database.db)).toEqual([]);
  });

  it("throttles attempts per email and source like sign-ins, without using up the source's sign-ins", async () => {
    await policy({ policy: "open", allowed_domains: [] });
    const answers: number[] = [];
    for (let i = 0; i < 6; i++) answers.push((await signUp("many.tries@any.test")).status);
    expect(answers).toEqual([201, 409, 409, 409, 409, 429]);
    const refused = await signUp("many.tries@any.test");
    expect(refused.body.error).toMatchObject({ code: "too_many_requests", details: { reason: "too_many_attempts" } });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // Sign-ins from the same source are counted apart.
    expect((await login("many.tries@any.test")).status).toBe(200);
  });

  it("refuses malformed input with the envelope", async () => {
    for (const json of [
      { email: "not-an-email", password: PASSWORD },
      { email: "x@example.org", password: "short" },
      { email: "x@example.org", password: PASSWORD, role: "super_admin" },
    ]) {
      const r = await t.request("POST", "/api/v1/auth/signup", { json });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("validation_failed");
    }
    const expired = await t.request("GET", "/api/v1/signup-requests", {
      token: await t.expiredTokenFor(w.superAdmin.id),
    });
    expect(expired.body.error.code).toBe("token_expired");
    const expiredDecision = await t.request("POST", `/api/v1/signup-requests/${w.memberA.id}/approve`, {
      token: await t.expiredTokenFor(w.superAdmin.id),
    });
    expect([expiredDecision.status, expiredDecision.body.error.code]).toEqual([401, "token_expired"]);
    const badStatus = await t.request("GET", "/api/v1/signup-requests?status=maybe", { token: w.superAdmin.token });
    expect(badStatus.status).toBe(400);
    expect(badStatus.body.error.details.issues[0].path).toEqual(["query", "status"]);
    const unknownField = await t.request("GET", "/api/v1/signup-requests?sort=email", { token: w.superAdmin.token });
    expect(unknownField.body.error.code).toBe("validation_failed");
    // A member may not decide, and an account that never asked is not a pending request.
    const member = await t.request("POST", `/api/v1/signup-requests/${w.memberA.id}/deny`, { token: w.memberA.token });
    expect(member.status).toBe(403);
    const never = await t.request("POST", `/api/v1/signup-requests/${w.memberA.id}/approve`, {
      token: w.superAdmin.token,
    });
    expect([never.status, never.body.error.code]).toEqual([404, "not_found"]);
    const tooLong = await t.request("POST", `/api/v1/signup-requests/${"u".repeat(200)}/approve`, {
      token: w.superAdmin.token,
    });
    expect(tooLong.body.error.code).toBe("validation_failed");
  });
});
