import { describe, expect, it } from "vitest";
import { anOrganizationWallet, aWallet, balanceOf, CREDIT, grant, useLedgerDatabase } from "./credits.test-support.ts";
import { SHORTFALL_WALLET, SYSTEM_WALLET } from "./ids.ts";
import { reverse, transfer } from "./ledger.ts";

const tdb = useLedgerDatabase();
const at = new Date("2026-11-22T12:00:00Z");

const move = (from: string, to: string, amount: bigint, extra: { idempotencyKey?: string; partial?: boolean } = {}) =>
  tdb.db.transaction((tx) =>
    transfer(tx, {
      kind: "allocation",
      fromWalletId: from,
      toWalletId: to,
      amount,
      actorKind: "user",
      actorId: "usr_admin",
      reason: "test",
      at,
      ...extra,
    }),
  );

describe("the ledger", () => {
  it("grants credits from the system wallet, which goes negative by what it issued", async () => {
    const before = await balanceOf(tdb.db, SYSTEM_WALLET);
    const org = await anOrganizationWallet(tdb.db, 100n * CREDIT);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(100n * CREDIT);
    expect(await balanceOf(tdb.db, SYSTEM_WALLET)).toBe(before - 100n * CREDIT);
  });

  it("moves credits down to a project wallet and back, both balances equal to their entries", async () => {
    const org = await anOrganizationWallet(tdb.db, 10n * CREDIT);
    const project = await aWallet(tdb.db, org.id, "project", "prj_x");
    await move(org.wallet.id, project.id, 4n * CREDIT);
    await move(project.id, org.wallet.id, 1n * CREDIT);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(7n * CREDIT);
    expect(await balanceOf(tdb.db, project.id)).toBe(3n * CREDIT);
  });

  it("refuses a transfer the payer cannot cover with insufficient_credits and moves nothing", async () => {
    const org = await anOrganizationWallet(tdb.db, 5n);
    const user = await aWallet(tdb.db, org.id, "user", "usr_a");
    await expect(move(org.wallet.id, user.id, 6n)).rejects.toMatchObject({
      code: "insufficient_credits",
      details: { spendable: "5", requested: "6" },
    });
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(5n);
    expect(await balanceOf(tdb.db, user.id)).toBe(0n);
  });

  it("moves what the payer has when a partial transfer is asked for", async () => {
    const org = await anOrganizationWallet(tdb.db, 5n);
    const user = await aWallet(tdb.db, org.id, "user", "usr_b");
    const r = await move(org.wallet.id, user.id, 8n, { partial: true });
    expect(r.moved).toBe(5n);
    expect(await balanceOf(tdb.db, user.id)).toBe(5n);
  });

  it("moves credits once per idempotency key", async () => {
    const org = await anOrganizationWallet(tdb.db, 10n);
    const user = await aWallet(tdb.db, org.id, "user", "usr_c");
    const first = await move(org.wallet.id, user.id, 3n, { idempotencyKey: "k-1" });
    const again = await move(org.wallet.id, user.id, 3n, { idempotencyKey: "k-1" });
    expect(again.replayed).toBe(true);
    expect(again.transaction?.seq).toBe(first.transaction?.seq);
    expect(await balanceOf(tdb.db, user.id)).toBe(3n);
  });

  it("refuses to update, delete or truncate a ledger row, whoever asks", async () => {
    await anOrganizationWallet(tdb.db, 1n);
    await expect(tdb.db("ledger_entries").update({ amount: "1000" })).rejects.toThrow(/append-only/);
    await expect(tdb.db("ledger_entries").delete()).rejects.toThrow(/append-only/);
    await expect(tdb.db("ledger_transactions").update({ amount: "0" })).rejects.toThrow(/append-only/);
    await expect(tdb.db("ledger_transactions").delete()).rejects.toThrow(/append-only/);
    await expect(tdb.db.raw("TRUNCATE ledger_entries")).rejects.toThrow(/append-only/);
  });

  it("refuses a transaction whose legs do not sum to zero", async () => {
    const org = await anOrganizationWallet(tdb.db, 0n);
    await expect(
      tdb.db.transaction(async (tx) => {
        const [t] = await tx("ledger_transactions")
          .insert({ id: "txn_unbalanced", kind: "grant", amount: "5", actor_kind: "system", created_at: at })
          .returning("seq");
        await tx("ledger_entries").insert({
          txn_seq: (t as { seq: string }).seq,
          wallet_id: org.wallet.id,
          amount: "5",
          created_at: at,
        });
      }),
    ).rejects.toThrow(/does not balance/);
  });

  it("refuses, in the database itself, a balance below the wallet's floor", async () => {
    const org = await anOrganizationWallet(tdb.db, 3n);
    const user = await aWallet(tdb.db, org.id, "user", "usr_d");
    // Written straight to the tables, skipping transfer()'s check: the CHECK constraint still holds.
    await expect(
      tdb.db.transaction(async (tx) => {
        const [t] = await tx("ledger_transactions")
          .insert({ id: "txn_overspend", kind: "allocation", amount: "4", actor_kind: "system", created_at: at })
          .returning("seq");
        const seq = (t as { seq: string }).seq;
        await tx("ledger_entries").insert([
          { txn_seq: seq, wallet_id: org.wallet.id, amount: "-4", created_at: at },
          { txn_seq: seq, wallet_id: user.id, amount: "4", created_at: at },
        ]);
      }),
    ).rejects.toThrow(/wallets_balance_floor/);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(3n);
  });

  it("reverses a transaction once, with its legs flipped", async () => {
    const org = await anOrganizationWallet(tdb.db, 10n);
    const user = await aWallet(tdb.db, org.id, "user", "usr_e");
    const r = await move(org.wallet.id, user.id, 4n);
    const original = r.transaction as NonNullable<typeof r.transaction>;
    await tdb.db.transaction((tx) =>
      reverse(tx, original, { actorKind: "user", actorId: "usr_admin", reason: "wrong wallet", at }),
    );
    expect(await balanceOf(tdb.db, user.id)).toBe(0n);
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(10n);
    await expect(
      tdb.db.transaction((tx) =>
        reverse(tx, original, { actorKind: "user", actorId: "usr_admin", reason: "again", at }),
      ),
    ).rejects.toMatchObject({ code: "conflict" });
  });

  it("lets exactly one of two concurrent spends through when together they exceed the balance", async () => {
    const org = await anOrganizationWallet(tdb.db, 10n * CREDIT);
    const a = await aWallet(tdb.db, org.id, "user", "usr_f");
    const b = await aWallet(tdb.db, org.id, "user", "usr_g");
    for (let round = 0; round < 10; round++) {
      const results = await Promise.allSettled([
        move(org.wallet.id, a.id, 6n * CREDIT),
        move(org.wallet.id, b.id, 6n * CREDIT),
      ]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      const refused = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
      expect(refused.reason).toMatchObject({ code: "insufficient_credits" });
      // Put it back for the next round.
      const winner = (await balanceOf(tdb.db, a.id)) > 0n ? a : b;
      await move(winner.id, org.wallet.id, 6n * CREDIT);
    }
    expect(await balanceOf(tdb.db, org.wallet.id)).toBe(10n * CREDIT);
  });

  it("keeps the shortfall account at zero until usage outruns every wallet", async () => {
    expect(await balanceOf(tdb.db, SHORTFALL_WALLET)).toBe(0n);
    await grant(tdb.db, (await anOrganizationWallet(tdb.db, 0n)).wallet.id, 1n);
  });
});
