// Journey over HTTP with the real API: a member's session is refused with quota_exceeded and its
// details while the organization's wallets cannot pay for ten minutes, then accepted after a top-up;
// a spent budget refuses it again; two colleagues starting sessions together on a thin wallet: one
// passes. The management cluster is a stand-in (catalog + Session writes).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aGpuCluster } from "../../db/operations/sessions/sessions.test-support.ts";
import { type IdentityTestApi, startIdentityTestApi, type TestUser } from "../identity/identity.test-support.ts";
import { makeSessionsRuntime } from "../sessions/runtime.ts";
import { expectLedgerInvariants } from "./credits.test-support.ts";
import { FakeManagementCluster } from "./fakes.test-support.ts";

describe("a session refused for credits", () => {
  let t: IdentityTestApi;
  let kube: FakeManagementCluster;
  let member: TestUser;
  let colleague: TestUser;
  let admin: TestUser;
  let superAdmin: TestUser;
  let orgId: string;

  beforeAll(async () => {
    kube = new FakeManagementCluster();
    t = await startIdentityTestApi({ sessions: makeSessionsRuntime(kube) });
    superAdmin = await t.aUser({ superAdmin: true });
    admin = await t.aUser();
    member = await t.aUser();
    colleague = await t.aUser();
    orgId = (await t.anOrganization("Door")).id;
    await t.member(admin, orgId, null, "org_admin");
    await t.member(member, orgId, null, "member");
    await t.member(colleague, orgId, null, "member");
    await aGpuCluster(t.database.db, "clu_door", 2);
  });
  afterAll(async () => {
    await expectLedgerInvariants(t.database.db);
    await t?.stop();
  });

  const create = (key: string, who: TestUser = member) =>
    t.request("POST", "/api/v1/sessions", {
      token: who.token,
      json: { offering: "h100", preset: "gpu-small", image: "jupyterlab", organization_id: orgId },
      headers: { "Idempotency-Key": key },
    });

  it("refuses the session with quota_exceeded saying what the wallets hold and what ten minutes cost, and writes nothing", async () => {
    const r = await create("door-1");
    expect(r.status, JSON.stringify(r.body)).toBe(403);
    expect(r.body.error).toMatchObject({
      code: "quota_exceeded",
      details: { limit: "credits", value: "0", required: "666667", minimum_run_seconds: 600, hourly_rate: "4000000" },
    });
    expect(await t.database.db("sessions").where({ organization_id: orgId })).toEqual([]);
    expect(kube.created).toEqual([]);
    // The refusal is remembered for its key like any decided answer.
    const again = await create("door-1");
    expect(again.status).toBe(403);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
  });

  it("accepts it once the organization's wallet covers ten minutes", async () => {
    const opened = await t.request("POST", "/api/v1/credits/wallets", {
      token: admin.token,
      json: { organization_id: orgId, owner_kind: "organization" },
    });
    expect(opened.status).toBe(201);
    const grant = await t.request("POST", "/api/v1/credits/allocations", {
      token: superAdmin.token,
      json: {
        from_wallet_id: "wal_system",
        to_wallet_id: opened.body.id,
        amount: "666667",
        reason: "ten minutes of H100",
      },
    });
    expect(grant.status).toBe(201);
    const r = await create("door-2");
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(kube.created).toHaveLength(2); // the organization's namespace and the Session
  });

  /** Credits from the system wallet to the organization's. */
  const topUp = async (amount: string) => {
    const wallet = await t.database.db("wallets").where({ organization_id: orgId, owner_kind: "organization" }).first();
    const r = await t.request("POST", "/api/v1/credits/allocations", {
      token: superAdmin.token,
      json: { from_wallet_id: "wal_system", to_wallet_id: wallet.id, amount, reason: "top-up" },
    });
    expect(r.status).toBe(201);
  };

  it("refuses another session while the wallet holds only the ten minutes owed to the one accepted", async () => {
    const r = await create("door-3", colleague);
    expect(r.status).toBe(403);
    expect(r.body.error.details).toMatchObject({
      limit: "credits",
      value: "666667",
      reserved: "666667",
      required: "666667",
      sessions_let_in: 1,
    });
  });

  it("refuses it again when the organization's budget has less left than ten minutes", async () => {
    await topUp("1000000");
    const put = await t.request("PUT", `/api/v1/budgets/${orgId}`, {
      token: admin.token,
      json: { period: "daily", amount: "100000" },
    });
    expect(put.status).toBe(201);
    const r = await create("door-4");
    expect(r.status).toBe(403);
    expect(r.body.error.details).toMatchObject({
      limit: "organizationBudget",
      value: "100000",
      spent: "0",
      required: "666667",
      period: "daily",
    });
  });

  it("lets only one of two colleagues starting sessions together pass on what is left after the promised run", async () => {
    expect((await t.request("DELETE", `/api/v1/budgets/${orgId}`, { token: admin.token })).status).toBe(204);
    // 1,666,667 units, of which 666,667 are owed to the session accepted above: room for one more.
    const both = await Promise.all([create("door-5", member), create("door-6", colleague)]);
    expect(both.map((x) => x.status).sort()).toEqual([201, 403]);
    const refused = both.find((x) => x.status === 403);
    expect(refused?.body.error.details).toMatchObject({ limit: "credits", value: "1666667", reserved: "1333334" });
    expect(await t.database.db("sessions").where({ organization_id: orgId })).toHaveLength(2);
  });
});
