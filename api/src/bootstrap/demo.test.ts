import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../db/db.test-support.ts";
import { checkLedgerInvariants } from "../domain/credits/invariants.ts";
import { ensureLocalDemo } from "./demo.ts";

describe("the local demo of npm start", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t?.drop();
  });

  it("makes a researcher in a funded organization once, who must change the generated password", async () => {
    const first = await ensureLocalDemo(t.db);
    expect(first).toMatchObject({ created: true, email: "researcher@berth.local" });
    expect(first.generatedPassword).toMatch(/.{16,}/);
    const user = await t.db("users").where({ email: "researcher@berth.local" }).first();
    expect(user).toMatchObject({ must_change_password: true, is_super_admin: false });
    const roles = await t.db("memberships").where({ user_id: user.id }).select("organization_id", "project_id", "role");
    expect(roles).toHaveLength(2);
    expect(roles.every((r) => r.organization_id === first.organizationId && r.role === "member")).toBe(true);
    const wallet = await t.db("wallets").where({ owner_kind: "organization", owner_id: first.organizationId }).first();
    expect(BigInt(wallet.balance)).toBe(75_000_000n);
    const own = await t.db("wallets").where({ owner_kind: "user", owner_id: user.id }).first();
    expect(own).toMatchObject({ organization_id: first.organizationId });
    expect(BigInt(own.balance)).toBe(25_000_000n);

    const second = await ensureLocalDemo(t.db);
    expect(second.created).toBe(false);
    expect(await t.db("organizations").where({ slug: "demo" })).toHaveLength(1);
    expect(await t.db("ledger_transactions").where({ kind: "grant" })).toHaveLength(1);
    expect(await t.db("ledger_transactions").where({ kind: "allocation" })).toHaveLength(1);
    expect(await checkLedgerInvariants(t.db)).toEqual([]);
  });

  it("leaves an existing account of that email alone", async () => {
    const other = await createTestDatabase();
    try {
      await other.db("users").insert({ id: "usr_x", email: "researcher@berth.local", password_hash: "x" });
      expect((await ensureLocalDemo(other.db, { password: "a chosen password" })).created).toBe(false);
      expect(await other.db("organizations")).toHaveLength(0);
    } finally {
      await other.drop();
    }
  });
});
