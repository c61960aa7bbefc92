// /api/v1/credits and /api/v1/budgets over HTTP with the real API, real authenticator and a real
// database: the journeys of money between wallets, and BOLA across organizations on every route.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { upsertBudget } from "../../db/operations/ledger/budgets.ts";
import type { WalletRow } from "../../db/operations/ledger/types.ts";
import { CreditsContext } from "../../domain/credits/context.ts";
import { expectLedgerInvariants } from "../../domain/credits/credits.test-support.ts";
import { grantToOrganization } from "../../domain/credits/grant.ts";
import { askForCredits } from "../../domain/credits/requests.ts";
import { ensureWallet } from "../../domain/credits/wallets.ts";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  itBehavesPerRole,
  type RouteCase,
  startIdentityTestApi,
} from "../../domain/identity/identity.test-support.ts";
import type { Principal } from "../../domain/identity/principal.ts";
import { BillingLoop } from "../../worker/billingLoop.ts";

const CREDIT = 1_000_000n;

describe("/api/v1/credits and /api/v1/budgets", () => {
  let t: IdentityTestApi;
  let w: IdentityWorld;
  let orgA: WalletRow;
  let orgB: WalletRow;
  let projectA: WalletRow;
  let memberAWallet: WalletRow;
  let refillA: string;

  const principalOf = (u: { id: string; email: string }, memberships: Principal["memberships"]): Principal => ({
    userId: u.id,
    email: u.email,
    isSuperAdmin: false,
    mustChangePassword: false,
    memberships,
  });

  beforeAll(async () => {
    t = await startIdentityTestApi();
    w = await anIdentityWorld(t);
    const now = t.clock.now();
    orgA = (
      await grantToOrganization(t.database.db, {
        organizationId: w.orgA.id,
        amount: 1000n * CREDIT,
        actorKind: "system",
        actorId: null,
        reason: "test",
        at: now,
      })
    ).wallet;
    orgB = (
      await grantToOrganization(t.database.db, {
        organizationId: w.orgB.id,
        amount: 1000n * CREDIT,
        actorKind: "system",
        actorId: null,
        reason: "test",
        at: now,
      })
    ).wallet;
    projectA = (
      await ensureWallet(t.database.db, { organizationId: w.orgA.id, kind: "project", id: w.projectA.id }, now)
    ).wallet;
    memberAWallet = (
      await ensureWallet(t.database.db, { organizationId: w.orgA.id, kind: "user", id: w.memberA.id }, now)
    ).wallet;
    const r = await t.request("POST", "/api/v1/credits/allocations", {
      token: w.adminA.token,
      json: {
        from_wallet_id: orgA.id,
        to_wallet_id: projectA.id,
        amount: (100n * CREDIT).toString(),
        reason: "project budget",
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const refill = await t.request("POST", "/api/v1/credits/refills", {
      token: w.adminA.token,
      json: { wallet_id: memberAWallet.id, mode: "top_up_to", amount: "5000000", period: "monthly" },
    });
    expect(refill.status, JSON.stringify(refill.body)).toBe(201);
    refillA = refill.body.id;
    await upsertBudget(t.database.db, {
      organizationId: w.orgA.id,
      period: "monthly",
      amount: 500n * CREDIT,
      by: w.adminA.id,
      at: now,
    });
  });
  afterEach(async () => {
    await expectLedgerInvariants(t.database.db);
  });
  afterAll(async () => {
    await t?.stop();
  });

  const aPendingRequestOfMemberA = async () =>
    (
      await askForCredits(
        { db: t.database.db, clock: t.clock },
        principalOf(w.memberA, [{ organizationId: w.orgA.id, projectId: w.projectA.id, role: "member" }]),
        {
          organizationId: w.orgA.id,
          amount: 2n * CREDIT,
          reason: "a longer training run",
        },
      )
    ).id;

  describe("journeys", () => {
    it("a member asks, an admin approves part of it, and the allocation shows in both wallets and the member is notified", async () => {
      const ask = await t.request("POST", "/api/v1/credits/requests", {
        token: w.orgMemberA.token,
        json: { organization_id: w.orgA.id, amount: "5000000", reason: "fine-tuning for the demo" },
      });
      expect(ask.status, JSON.stringify(ask.body)).toBe(201);
      expect(ask.body).toMatchObject({ status: "pending", amount: "5000000", requester_id: w.orgMemberA.id });

      const pending = await t.request("GET", "/api/v1/credits/requests?status=pending", { token: w.adminA.token });
      expect(pending.body.data.map((r: { id: string }) => r.id)).toContain(ask.body.id);

      const orgBefore = (await t.request("GET", `/api/v1/credits/wallets/${orgA.id}`, { token: w.adminA.token })).body
        .balance;
      const approve = await t.request("POST", `/api/v1/credits/requests/${ask.body.id}/approve`, {
        token: w.adminA.token,
        json: { amount: "3000000", note: "three for now" },
      });
      expect(approve.status, JSON.stringify(approve.body)).toBe(200);
      expect(approve.body).toMatchObject({
        status: "partially_approved",
        approved_amount: "3000000",
        decided_by: w.adminA.id,
      });

      const mine = await t.request("GET", `/api/v1/credits/wallets/${ask.body.wallet_id}`, {
        token: w.orgMemberA.token,
      });
      expect(mine.body).toMatchObject({
        balance: "3000000",
        spendable: "3000000",
        owner: { kind: "user", id: w.orgMemberA.id },
      });
      const org = await t.request("GET", `/api/v1/credits/wallets/${orgA.id}`, { token: w.adminA.token });
      expect(BigInt(org.body.balance)).toBe(BigInt(orgBefore) - 3n * CREDIT);

      const myLedger = await t.request("GET", `/api/v1/credits/wallets/${ask.body.wallet_id}/ledger`, {
        token: w.orgMemberA.token,
      });
      expect(myLedger.body.data[0]).toMatchObject({
        kind: "request",
        amount: "3000000",
        balance_after: "3000000",
        actor: { kind: "user", id: w.adminA.id },
      });
      const orgLedger = await t.request("GET", `/api/v1/credits/wallets/${orgA.id}/ledger?kind=request`, {
        token: w.adminA.token,
      });
      expect(orgLedger.body.data[0]).toMatchObject({
        kind: "request",
        amount: "-3000000",
        sequence: myLedger.body.data[0].sequence,
      });

      const moves = await t.request("GET", `/api/v1/credits/allocations?wallet_id=${ask.body.wallet_id}`, {
        token: w.orgMemberA.token,
      });
      expect(moves.body.data).toEqual([
        expect.objectContaining({
          kind: "request",
          from_wallet_id: orgA.id,
          to_wallet_id: ask.body.wallet_id,
          amount: "3000000",
        }),
      ]);

      // The movement links to its audit row by request id.
      const audit = await t.database
        .db("audit_log")
        .where({ action: "credits.request.approve", request_id: myLedger.body.data[0].request_id })
        .first();
      expect(audit).toMatchObject({ actor_id: w.adminA.id, outcome: "success", organization_id: w.orgA.id });

      const notes = await t.database.db("notifications").where({ user_id: w.orgMemberA.id });
      expect(notes).toEqual([
        expect.objectContaining({ kind: "credits.request_partially_approved", organization_id: w.orgA.id }),
      ]);

      // Decided is decided.
      const again = await t.request("POST", `/api/v1/credits/requests/${ask.body.id}/approve`, {
        token: w.adminA.token,
        json: {},
      });
      expect(again.status).toBe(409);
    });

    it("a denied request moves nothing and tells the requester", async () => {
      const id = await aPendingRequestOfMemberA();
      const r = await t.request("POST", `/api/v1/credits/requests/${id}/deny`, {
        token: w.adminA.token,
        json: { note: "not this quarter" },
      });
      expect(r.body).toMatchObject({ status: "denied", approved_amount: null, transaction_sequence: null });
      const n = await t.database.db("notifications").where({ user_id: w.memberA.id, kind: "credits.request_denied" });
      expect(n).toHaveLength(1);
    });

    it("moves credits once for one Idempotency-Key, and answers the first movement again", async () => {
      const json = {
        from_wallet_id: projectA.id,
        to_wallet_id: memberAWallet.id,
        amount: "1000000",
        reason: "for the notebook",
      };
      const headers = { "Idempotency-Key": "alloc-once-1" };
      const first = await t.request("POST", "/api/v1/credits/allocations", {
        token: w.projectAdminA.token,
        json,
        headers,
      });
      const second = await t.request("POST", "/api/v1/credits/allocations", {
        token: w.projectAdminA.token,
        json,
        headers,
      });
      expect(first.status).toBe(201);
      expect(second.status).toBe(201);
      expect(second.headers.get("idempotent-replayed")).toBe("true");
      expect(second.body.id).toBe(first.body.id);
      const n = await t.database.db("ledger_transactions").where({ request_id: first.headers.get("x-request-id") });
      expect(n).toHaveLength(1);
    });

    it("refuses a movement the paying wallet cannot cover with 409 insufficient_credits", async () => {
      const r = await t.request("POST", "/api/v1/credits/allocations", {
        token: w.projectAdminA.token,
        json: {
          from_wallet_id: projectA.id,
          to_wallet_id: memberAWallet.id,
          amount: (10_000n * CREDIT).toString(),
          reason: "too much",
        },
      });
      expect(r.status).toBe(409);
      expect(r.body.error).toMatchObject({
        code: "insufficient_credits",
        details: { wallet_id: projectA.id, requested: "10000000000" },
      });
    });

    it("refuses amounts that are not strings of whole minor units", async () => {
      for (const amount of [1000000, "1.5", "-3", "0", "1e6", "00012"]) {
        const r = await t.request("POST", "/api/v1/credits/allocations", {
          token: w.adminA.token,
          json: { from_wallet_id: orgA.id, to_wallet_id: projectA.id, amount, reason: "x" },
        });
        expect(r.status, String(amount)).toBe(400);
      }
    });

    it("refuses moving credits across organizations, even for a super_admin", async () => {
      const r = await t.request("POST", "/api/v1/credits/allocations", {
        token: w.superAdmin.token,
        json: { from_wallet_id: orgA.id, to_wallet_id: orgB.id, amount: "1", reason: "x" },
      });
      expect(r.status).toBe(400);
    });

    it("lets a super_admin issue credits from the system wallet to an organization", async () => {
      const r = await t.request("POST", "/api/v1/credits/allocations", {
        token: w.superAdmin.token,
        json: { from_wallet_id: "wal_system", to_wallet_id: orgB.id, amount: "7", reason: "quarterly grant" },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.body).toMatchObject({ kind: "grant", from_wallet_id: "wal_system", to_wallet_id: orgB.id });
      const asAdmin = await t.request("POST", "/api/v1/credits/allocations", {
        token: w.adminB.token,
        json: { from_wallet_id: "wal_system", to_wallet_id: orgB.id, amount: "7", reason: "myself" },
      });
      expect(asAdmin.status).toBe(404);
    });

    it("exports a wallet's ledger as CSV with the same lines", async () => {
      const res = await fetch(`${t.api.url}/api/v1/credits/wallets/${orgA.id}/ledger/export?kind=allocation`, {
        headers: { Authorization: `Bearer ${w.adminA.token}` },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/csv/);
      const lines = (await res.text()).trim().split("\r\n");
      expect(lines[0]).toBe(
        "sequence,transaction_id,at,kind,amount,balance_after,reason,actor_kind,actor_id,request_id,session_id,cluster_id,sample_id",
      );
      const json = await t.request("GET", `/api/v1/credits/wallets/${orgA.id}/ledger?kind=allocation&size=100`, {
        token: w.adminA.token,
      });
      expect(lines.length - 1).toBe(json.body.pagination.total);
      expect(lines[1]?.split(",")[4]).toBe(json.body.data[0].amount);
    });

    it("exports the ledger only to those who see the wallet", async () => {
      for (const [who, status] of [
        [w.adminA, 200],
        [w.adminB, 404],
        [w.memberA, 404],
      ] as const) {
        const res = await fetch(`${t.api.url}/api/v1/credits/wallets/${orgA.id}/ledger/export`, {
          headers: { Authorization: `Bearer ${who.token}` },
        });
        expect(res.status).toBe(status);
        await res.text();
      }
    });

    it("lists only the caller's scope, ignoring a filter outside it", async () => {
      const r = await t.request("GET", `/api/v1/credits/wallets?organization=${w.orgA.id}`, { token: w.adminB.token });
      expect(r.status).toBe(200);
      expect(r.body.data.every((x: { organization_id: string }) => x.organization_id === w.orgB.id)).toBe(true);
      const mine = await t.request("GET", "/api/v1/credits/wallets", { token: w.memberA.token });
      expect(mine.body.data.map((x: { id: string }) => x.id).sort()).toEqual([memberAWallet.id, projectA.id].sort());
      const moves = await t.request("GET", "/api/v1/credits/allocations", { token: w.adminB.token });
      expect(moves.body.data.every((m: { organization_id: string }) => m.organization_id === w.orgB.id)).toBe(true);
      const budgets = await t.request("GET", "/api/v1/budgets", { token: w.adminB.token });
      expect(budgets.body.data).toEqual([]);
    });

    it("narrows the list to one owner's wallets, within the caller's scope", async () => {
      const path = `/api/v1/credits/wallets?owner_id=${memberAWallet.owner_id}`;
      const theirs = await t.request("GET", path, { token: w.adminA.token });
      expect(theirs.body.data.map((x: { id: string }) => x.id)).toEqual([memberAWallet.id]);
      const outside = await t.request("GET", path, { token: w.adminB.token });
      expect(outside.status).toBe(200);
      expect(outside.body.data).toEqual([]);
    });

    it("lets a project admin manage a member's wallet of the project's organization only, not theirs elsewhere", async () => {
      const both = await t.aUser();
      await t.member(both, w.orgA.id, w.projectA.id, "member");
      await t.member(both, w.orgB.id, null, "member");
      const now = t.clock.now();
      const inA = (await ensureWallet(t.database.db, { organizationId: w.orgA.id, kind: "user", id: both.id }, now))
        .wallet;
      const inB = (await ensureWallet(t.database.db, { organizationId: w.orgB.id, kind: "user", id: both.id }, now))
        .wallet;
      const limit = (id: string) =>
        t.request("PATCH", `/api/v1/credits/wallets/${id}`, {
          token: w.projectAdminA.token,
          json: { max_spend_per_day: "0" },
        });
      expect(
        (await t.request("GET", `/api/v1/credits/wallets/${inA.id}`, { token: w.projectAdminA.token })).status,
      ).toBe(200);
      expect((await limit(inA.id)).status).toBe(200);
      expect(
        (await t.request("GET", `/api/v1/credits/wallets/${inB.id}`, { token: w.projectAdminA.token })).status,
      ).toBe(404);
      expect((await limit(inB.id)).status).toBe(404);
    });

    it("shows a budget with its spend so far", async () => {
      const r = await t.request("GET", `/api/v1/budgets/${w.orgA.id}`, { token: w.adminA.token });
      expect(r.body).toMatchObject({
        organization_id: w.orgA.id,
        period: "monthly",
        amount: "500000000",
        spent: "0",
        remaining: "500000000",
        period_start: "2026-11-01T00:00:00.000Z",
        resets_at: "2026-12-01T00:00:00.000Z",
      });
      const put = await t.request("PUT", `/api/v1/budgets/${w.orgB.id}`, {
        token: w.adminB.token,
        json: { period: "weekly", amount: "9000000" },
      });
      expect(put.status).toBe(201);
      const memberPut = await t.request("PUT", `/api/v1/budgets/${w.orgA.id}`, {
        token: w.memberA.token,
        json: { period: "weekly", amount: "1" },
      });
      expect(memberPut.status).toBe(403);
      const otherPut = await t.request("PUT", `/api/v1/budgets/${w.orgA.id}`, {
        token: w.adminB.token,
        json: { period: "weekly", amount: "1" },
      });
      expect(otherPut.status).toBe(404);
    });

    it("applies a refill made over HTTP once per period across a worker restart", async () => {
      const { wallet } = await ensureWallet(
        t.database.db,
        { organizationId: w.orgA.id, kind: "user", id: w.projectAdminA.id },
        t.clock.now(),
      );
      const made = await t.request("POST", "/api/v1/credits/refills", {
        token: w.adminA.token,
        json: { wallet_id: wallet.id, mode: "add", amount: "1000000", period: "daily" },
        headers: { "Idempotency-Key": "refill-daily-1" },
      });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      const pass = async () => {
        const loop = new BillingLoop({
          billing: new CreditsContext({ db: t.database.db, clock: t.clock, log: t.deps.log }),
          pause: async () => false,
        });
        await loop.pass();
        await loop.stop();
      };
      // Tokens live 15 minutes of the test's clock: a day later, sign in again.
      const balance = async () =>
        (await t.request("GET", `/api/v1/credits/wallets/${wallet.id}`, { token: await t.tokenFor(w.adminA.id) })).body
          .balance;
      await pass();
      await pass(); // a restarted worker, same day
      expect(await balance()).toBe("1000000");
      t.clock.advance(24 * 3600);
      try {
        await pass();
        await pass();
        expect(await balance()).toBe("2000000");
        const detail = await t.request("GET", `/api/v1/credits/refills/${made.body.id}`, {
          token: await t.tokenFor(w.adminA.id),
        });
        expect(detail.body.applications).toHaveLength(2);
      } finally {
        t.clock.advance(-24 * 3600);
        await t.database.db("refills").where({ id: made.body.id }).update({ enabled: false });
      }
    });

    it("refuses a credit request for an organization that is not the caller's", async () => {
      const r = await t.request("POST", "/api/v1/credits/requests", {
        token: w.memberB.token,
        json: { organization_id: w.orgA.id, amount: "1", reason: "x" },
      });
      expect(r.status).toBe(400);
      expect(r.body.error.details.issues[0].path).toEqual(["body", "organization_id"]);
    });
  });

  describe("BOLA: who may do what, on every route", () => {
    let n = 0;
    const cases: RouteCase[] = [
      {
        name: "/credits/wallets (open)",
        method: "POST",
        path: () => "/api/v1/credits/wallets",
        body: async (w) => ({
          organization_id: w.orgA.id,
          owner_kind: "project",
          owner_id: (await t.aProject(w.orgA.id, `Wallet project ${n++}`)).id,
        }),
        allowed: [
          { as: "superAdmin", status: 201 },
          { as: "adminA", status: 201 },
        ],
        refused: [
          { as: "adminB", status: 404, why: "another organization's admin" },
          { as: "memberB", status: 404, why: "another organization's member" },
          { as: "projectAdminA", status: 403, why: "a project admin, not an organization admin" },
          { as: "outsider", status: 404, why: "no membership" },
        ],
        malformed: { organization_id: 5, owner_kind: "team" },
      },
      {
        name: "/credits/wallets/:id (organization's wallet)",
        method: "GET",
        path: () => `/api/v1/credits/wallets/${orgA.id}`,
        allowed: [
          { as: "superAdmin", status: 200 },
          { as: "adminA", status: 200 },
        ],
        refused: [
          { as: "adminB", status: 404, why: "another organization's admin" },
          { as: "memberB", status: 404, why: "another organization's member" },
          { as: "memberA", status: 404, why: "a member does not see the organization's wallet" },
          { as: "outsider", status: 404, why: "no membership" },
        ],
      },
      {
        name: "/credits/wallets/:id (a member's wallet)",
        method: "GET",
        path: () => `/api/v1/credits/wallets/${memberAWallet.id}`,
        allowed: [
          { as: "memberA", status: 200 },
          { as: "adminA", status: 200 },
          { as: "projectAdminA", status: 200 },
        ],
        refused: [
          { as: "adminB", status: 404, why: "another organization's admin" },
          { as: "memberB", status: 404, why: "another organization's member" },
          { as: "orgMemberA", status: 404, why: "someone else's wallet" },
        ],
      },
      {
        name: "/credits/wallets/:id (change)",
        method: "PATCH",
        path: () => `/api/v1/credits/wallets/${projectA.id}`,
        body: () => ({ display_name: `Project A wallet ${n++}` }),
        allowed: [
          { as: "adminA", status: 200 },
          { as: "projectAdminA", status: 200 },
        ],
        refused: [
          { as: "adminB", status: 404, why: "another organization's admin" },
          { as: "memberB", status: 404, why: "another organization's member" },
          { as: "memberA", status: 403, why: "sees the project's wallet, does not manage it" },
        ],
        malformed: { limits: { overdraft: 5 } },
      },
      {
        name: "/credits/wallets/:id/ledger",
        method: "GET",
        path: () => `/api/v1/credits/wallets/${projectA.id}/ledger`,
        allowed: [
          { as: "adminA", status: 200 },
          { as: "memberA", status: 200 },
        ],
        refused: [
          { as: "adminB", status: 404, why: "another organization's admin" },
          { as: "memberB", status: 404, why: "another organization's member" },
          { as: "orgMemberA", status: 404, why: "not in the project" },
        ],
      },
      {
        name: "/credits/allocations (from the organization's wallet)",
        method: "POST",
        path: () => "/api/v1/credits/allocations",
        body: () => ({ from_wallet_id: orgA.id, to_wallet_id: memberAWallet.id, amount: "1", reason: "a little" }),
        allowed: [
          { as: "adminA", status: 201 },
          { as: "superAdmin", status: 201 },
        ],
        refused: [
          { as: "adminB", status: 404, why: "another organization's admin" },
          { as: "memberB", status: 404, why: "another organization's member" },
          { as: "memberA", status: 404, why: "does not see the paying wallet" },
          { as: "projectAdminA", status: 404, why: "does not see the organization's wallet" },
        ],
        malformed: { from_wallet_id: "wal_x", to_wallet_id: "wal_y", amount: 1, reason: "" },
      },
      {
        name: "/credits/allocations (from a project's wallet)",
        method: "POST",
        path: () => "/api/v1/credits/allocations",
        body: () => ({ from_wallet_id: projectA.id, to_wallet_id: memberAWallet.id, amount: "1", reason: "a little" }),
        allowed: [
          { as: "projectAdminA", status: 201 },
          { as: "adminA", status: 201 },
        ],
        refused: [
          { as: "adminB", status: 404, why: "another organization's admin" },
          { as: "memberA", status: 403, why: "sees the project's wallet, does not manage it" },
        ],
      },
      {
        name: "/credits/requests/:id",
        method: "GET",
        path: () => aPendingRequestOfMemberA().then((id) => `/api/v1/credits/requests/${id}`),
        allowed: [
          { as: "memberA", status: 200 },
          { as: "adminA", status: 200 },
        ],
        refused: [
          { as: "adminB", status: 404, why: "another organization's admin" },
          { as: "memberB", status: 404, why: "another organization's member" },
          { as: "orgMemberA", status: 404, why: "someone else's request" },
        ],
      },
      {
        name: "/credits/requests/:id/approve",
        method: "POST",
        path: () => aPendingRequestOfMemberA().then((id) => `/api/v1/credits/requests/${id}/approve`),
        body: () => ({ amount: "1" }),
        allowed: [
          { as: "adminA", status: 200 },
          { as: "superAdmin", status: 200 },
        ],
        refused: [
          { as: "adminB", status: 404, why: "another organization's admin" },
          { as: "memberB", status: 404, why: "another organization's member" },
          { as: "memberA", status: 403, why: "the requester does not decide" },
        ],
        malformed: { amount: 1 },
      },
      {
        name: "/credits/requests/:id/deny",
        method: "POST",
        path: () => aPendingRequestOfMemberA().then((id) => `/api/v1/credits/requests/${id}/deny`),
        body: () => ({}),
        allowed: [{ as: "adminA", status: 200 }],
        refused: [
          { as: "adminB", status: 404, why: "another organization's admin" },
          { as: "memberA", status: 403, why: "the requester does not decide" },
        ],
      },
      {
        name: "/credits/requests/:id/cancel",
        method: "POST",
        path: () => aPendingRequestOfMemberA().then((id) => `/api/v1/credits/requests/${id}/cancel`),
        allowed: [{ as: "memberA", status: 200 }],
        refused: [
          { as: "adminB", status: 404, why: "another organization's admin" },
          { as: "adminA", status: 403, why: "only the requester withdraws" },
        ],
      },
      {
        name: "/credits/refills (create)",
        method: "POST",
        path: () => "/api/v1/credits/refills",
        body: () => ({ wallet_id: memberAWallet.id, mode: "add", amount: "1000", period: "weekly" }),
        allowed: [{ as: "adminA", status: 201 }],
        refused: [
          { as: "adminB", status: 404, why: "another organization's admin" },
          { as: "memberB", status: 404, why: "another organization's member" },
          { as: "memberA", status: 404, why: "does not see the paying wallet" },
        ],
        malformed: { wallet_id: "wal_x", mode: "sometimes", amount: "1", period: "hourly" },
      },
      {
        name: "/credits/refills/:id",
        method: "GET",
        path: () => `/api/v1/credits/refills/${refillA}`,
        allowed: [
          { as: "adminA", status: 200 },
          { as: "memberA", status: 200 },
        ],
        refused: [
          { as: "adminB", status: 404, why: "another organization's admin" },
          { as: "memberB", status: 404, why: "another organization's member" },
          { as: "orgMemberA", status: 404, why: "neither wallet is theirs" },
        ],
      },
      {
        name: "/credits/refills/:id (change)",
        method: "PATCH",
        path: () => `/api/v1/credits/refills/${refillA}`,
        body: () => ({ amount: "5000000" }),
        allowed: [{ as: "adminA", status: 200 }],
        refused: [
          { as: "adminB", status: 404, why: "another organization's admin" },
          { as: "memberA", status: 403, why: "sees the refilled wallet, does not manage the paying one" },
        ],
        malformed: { amount: -1 },
      },
      {
        name: "/budgets/:organizationId",
        method: "GET",
        path: (w) => `/api/v1/budgets/${w.orgA.id}`,
        allowed: [
          { as: "adminA", status: 200 },
          { as: "superAdmin", status: 200 },
        ],
        refused: [
          { as: "adminB", status: 404, why: "another organization's admin" },
          { as: "memberB", status: 404, why: "another organization's member" },
          { as: "memberA", status: 403, why: "a member, not an admin" },
        ],
      },
      {
        name: "/budgets/:organizationId (remove)",
        method: "DELETE",
        path: async (w) => {
          await upsertBudget(t.database.db, {
            organizationId: w.orgA.id,
            period: "monthly",
            amount: 500n * CREDIT,
            by: w.adminA.id,
            at: t.clock.now(),
          });
          return `/api/v1/budgets/${w.orgA.id}`;
        },
        allowed: [{ as: "adminA", status: 204 }],
        refused: [
          { as: "adminB", status: 404, why: "another organization's admin" },
          { as: "memberA", status: 403, why: "a member, not an admin" },
        ],
      },
    ];
    itBehavesPerRole(cases, () => ({ t, w }));
  });
});
