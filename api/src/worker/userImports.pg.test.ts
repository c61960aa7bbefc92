// The worker's user-import loop against real Postgres and the API over HTTP: a job waits queued (its
// results and passwords answer 409 until it ends), a job stopped half-way is resumed by another worker
// without doing a row twice and without a row done but unrecorded, unfetched passwords are erased past
// the retention (410 expired), a job whose administrator lost the right ends failed, and a dry run plays
// its rows in memory (no hash, no transaction, no statement per row) to the outcomes the import then has,
// and the import itself writes a chunk of rows in a few statements, the ledger exact to the unit.
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grantToOrganization } from "../domain/credits/grant.ts";
import { checkLedgerInvariants } from "../domain/credits/invariants.ts";
import { ensureWallet } from "../domain/credits/wallets.ts";
import { type IdentityTestApi, startIdentityTestApi } from "../domain/identity/identity.test-support.ts";
import { type RowResult, runImport } from "../domain/identity/imports/importUsers.ts";
import { PasswordHasher } from "../domain/identity/password.ts";
import { parseSecretKeys } from "../domain/webhooks/secretBox.ts";
import { UserImportLoop } from "./userImports.ts";

const HEADER = "email,name,organization,project,role,initial_credits";

describe("the worker's user-import loop", () => {
  let t: IdentityTestApi;
  const loops: UserImportLoop[] = [];
  const aLoop = () => {
    const l = new UserImportLoop({
      db: t.database.db,
      log: pino({ level: "silent" }),
      clock: t.clock,
      secretKeys: parseSecretKeys(t.deps.config.webhooks.secretKeys.reveal()),
      claimMs: 60_000,
    });
    loops.push(l);
    return l;
  };
  beforeAll(async () => {
    t = await startIdentityTestApi();
  });
  afterAll(async () => {
    for (const l of loops) await l.stop();
    await t?.stop();
  });

  let n = 0;
  const email = () => `w-${Date.now().toString(36)}-${n++}@job.test`;
  const anAdmin = async () => {
    const org = await t.anOrganization(`Job ${n++}`);
    const admin = await t.aUser();
    await t.member(admin, org.id, null, "org_admin");
    return { org, admin };
  };
  const start = async (token: string, rows: string[], dryRun = false) => {
    const r = await t.request("POST", "/api/v1/users/imports", {
      token,
      json: { csv: [HEADER, ...rows].join("\r\n"), dry_run: dryRun },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    return r.body.id as string;
  };
  const job = async (token: string, id: string) =>
    (await t.request("GET", `/api/v1/users/imports/${id}`, { token })).body;
  /** Waits, with a deadline, until `check` holds. */
  const until = async (what: string, check: () => Promise<boolean>) => {
    const deadline = Date.now() + 120_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`still not ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it("keeps a job queued until a worker takes it; its results and passwords answer 409 until it ends", async () => {
    const { org, admin } = await anAdmin();
    const id = await start(admin.token, [`${email()},,${org.slug},,,`]);
    expect(await job(admin.token, id)).toMatchObject({ state: "queued", rows_done: 0, started_at: null });
    const csv = await t.request("GET", `/api/v1/users/imports/${id}/results.csv`, { token: admin.token });
    expect(csv.status).toBe(409);
    expect(csv.body.error).toMatchObject({ code: "import_not_finished", details: { state: "queued" } });
    const pw = await t.request("POST", `/api/v1/users/imports/${id}/temporary-passwords`, { token: admin.token });
    expect(pw.status).toBe(409);
    expect(pw.body.error.code).toBe("import_not_finished");
    const loop = aLoop();
    await loop.poll();
    await loop.idle();
    expect(await job(admin.token, id)).toMatchObject({ state: "succeeded", rows_done: 1 });
  });

  it("resumes a job stopped half-way in another worker: every row once, none done without its record", async () => {
    const { org, admin } = await anAdmin();
    const emails = Array.from({ length: 200 }, () => email());
    const id = await start(
      admin.token,
      emails.map((e) => `${e},,${org.slug},,,`),
    );
    const first = aLoop();
    const recorded = () => t.database.db("user_import_rows").where({ import_id: id }).count({ c: "*" }).first();
    // Every chunk locks its organization's wallet. Holding it, the first chunk waits; the worker is shut down
    // while it does, then the wallet is let go: that chunk ends and the worker stops before the next one.
    // Exactly one chunk, however fast the machine (chunks of 50 can all end before a poll sees the first).
    const db = t.database.db;
    const walletOwner = { organization_id: org.id, owner_kind: "organization", owner_id: org.id };
    await ensureWallet(db, { organizationId: org.id, kind: "organization", id: org.id }, t.clock.now());
    const holder = await db.transaction();
    try {
      await holder("wallets").where(walletOwner).forUpdate().first();
      await first.poll();
      await until("the first chunk waiting for the wallet", async () => {
        const waiting = await db.raw(
          `SELECT count(*)::int AS c FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE OF w%'`,
        );
        return waiting.rows[0].c > 0;
      });
      const stopping = first.stop(); // as a worker that is shut down: it stops before its next chunk
      await holder.commit();
      await stopping;
    } finally {
      if (!holder.isCompleted()) await holder.rollback();
    }
    const half = Number((await recorded())?.c);
    expect(half).toBe(50);
    expect(await job(admin.token, id)).toMatchObject({ state: "running", rows_done: half });
    // Every account made has its record (they commit together), and no record lacks its account.
    const made = await t.database.db("users").whereIn("email", emails).pluck("id");
    expect(made).toHaveLength(half);

    // Its claim holds a minute: another worker takes it over once it has run out.
    const second = aLoop();
    await second.poll();
    await second.idle();
    expect((await job(admin.token, id)).state).toBe("running");
    t.clock.advance(61);
    await second.poll();
    await second.idle();
    const done = await job(admin.token, id);
    expect(done).toMatchObject({ state: "succeeded", rows_done: 200, counts: { create: 200, error: 0 } });
    expect(await t.database.db("users").whereIn("email", emails).count({ c: "*" }).first()).toEqual({ c: "200" });
    const row = await t.database.db("user_imports").where({ id }).first("attempts", "csv");
    expect(row).toEqual({ attempts: 2, csv: null });
    const pw = await t.request("POST", `/api/v1/users/imports/${id}/temporary-passwords`, { token: admin.token });
    expect(new Set(pw.body.temporary_passwords.map((p: { email: string }) => p.email))).toEqual(new Set(emails));
  });

  it("erases passwords nobody fetched once the retention is over: 410 import_passwords_gone, expired", async () => {
    const { org, admin } = await anAdmin();
    const id = await start(admin.token, [`${email()},,${org.slug},,,`]);
    const loop = aLoop();
    await loop.poll();
    await loop.idle();
    expect((await job(admin.token, id)).temporary_passwords.state).toBe("held");
    // The test clock moves the tokens' time too: a fresh token after each step.
    t.clock.advance(23 * 3600);
    await loop.poll();
    expect((await job(await t.tokenFor(admin.id), id)).temporary_passwords.state).toBe("held");
    t.clock.advance(2 * 3600);
    await loop.poll();
    const token = await t.tokenFor(admin.id);
    expect((await job(token, id)).temporary_passwords.state).toBe("expired");
    expect(await t.database.db("user_import_rows").where({ import_id: id }).whereNotNull("sealed_password")).toEqual(
      [],
    );
    const pw = await t.request("POST", `/api/v1/users/imports/${id}/temporary-passwords`, { token });
    expect(pw.status).toBe(410);
    expect(pw.body.error).toMatchObject({ code: "import_passwords_gone", details: { reason: "expired" } });
  });

  it("ends a job failed, importing nothing, when its administrator lost the right before it ran", async () => {
    const { org, admin } = await anAdmin();
    const e = email();
    const id = await start(admin.token, [`${e},,${org.slug},,,`]);
    await t.member(admin, org.id, null, "member");
    const loop = aLoop();
    await loop.poll();
    await loop.idle();
    expect(await job(admin.token, id)).toMatchObject({ state: "failed", rows_done: 0, failure: { code: "forbidden" } });
    expect(await t.database.db("users").where({ email: e }).first()).toBeUndefined();
  });

  it("refuses the passwords to their importer once no longer an administrator, and keeps them sealed", async () => {
    const { org, admin } = await anAdmin();
    const id = await start(admin.token, [`${email()},,${org.slug},,,`]);
    const loop = aLoop();
    await loop.poll();
    await loop.idle();
    await t.member(admin, org.id, null, "member");
    const pw = await t.request("POST", `/api/v1/users/imports/${id}/temporary-passwords`, { token: admin.token });
    expect(pw.status).toBe(403);
    expect(pw.body.error.code).toBe("forbidden");
    expect((await job(admin.token, id)).temporary_passwords.state).toBe("held");
  });

  it("runs a dry run as a job too, writing nothing but its records", async () => {
    const { org, admin } = await anAdmin();
    const e = email();
    const id = await start(admin.token, [`${e},,${org.slug},,,`, "bad,,,,,"], true);
    const loop = aLoop();
    await loop.poll();
    await loop.idle();
    expect(await job(admin.token, id)).toMatchObject({
      state: "succeeded",
      counts: { create: 1, error: 1 },
      temporary_passwords: { state: "none", count: 0 },
    });
    expect(await t.database.db("users").where({ email: e }).first()).toBeUndefined();
    const pw = await t.request("POST", `/api/v1/users/imports/${id}/temporary-passwords`, { token: admin.token });
    expect(pw.body).toEqual({ temporary_passwords: [] });
  });

  it("plays a dry run in memory: no hash, no transaction, no statement per row, the outcomes the import has", async () => {
    const { org, admin } = await anAdmin();
    const project = await t.aProject(org.id, "Vision");
    const existing = await t.aUser();
    await t.member(existing, org.id, null, "member");
    // Enough for the first rows' initial and welcome credits only: later rows are refused or go unpaid.
    await grantToOrganization(t.database.db, {
      organizationId: org.id,
      amount: 40_000_000n,
      actorKind: "system",
      actorId: null,
      reason: "test",
      at: t.clock.now(),
    });
    await t.database.db("organization_welcome_credits").insert({ organization_id: org.id, amount: "1000000" });
    const rows = [
      `${existing.email},,${org.slug},Vision,project_admin,`,
      ...Array.from({ length: 2 }, () => `twice-${n}@job.test,,${org.slug},,,`),
      "not-an-email,,,,,",
      ...Array.from(
        { length: 120 },
        (_, i) => `${email()},P ${i},${org.slug},${i % 2 ? project.name : ""},,${i % 3 ? "" : "2"}`,
      ),
    ];
    const db = t.database.db;
    const jobOf = async (id: string) => db("user_imports").where({ id }).first();
    const hooks = { seal: (p: string) => `sealed:${p}`, keepClaim: async () => true };
    let hashes = 0;
    const real = new PasswordHasher();
    const deps = {
      db,
      clock: t.clock,
      auth: {
        hasher: {
          hashGenerated: (p: string) => {
            hashes++;
            return real.hashGenerated(p);
          },
        },
      },
    };
    const statements: string[] = [];
    const seen = (q: { sql: string }) => statements.push(q.sql);
    const results = async (id: string) =>
      (await db("user_import_rows").where({ import_id: id }).orderBy("idx").pluck("result")) as RowResult[];

    const dryId = await start(admin.token, rows, true);
    db.on("query", seen);
    try {
      await runImport(deps, await jobOf(dryId), hooks);
    } finally {
      db.off("query", seen);
    }
    expect(hashes).toBe(0);
    // Reads, and the job's own records: no account, membership, ledger movement or notification made and
    // rolled back, no transaction or savepoint opened for a row.
    const writes = statements.filter((q) => !/^\s*select\b/i.test(q));
    expect(writes.filter((q) => !/^(insert into|delete from) "user_import_rows"/i.test(q.trim()))).toEqual([]);
    expect(statements.length).toBeLessThan(rows.length / 5);

    const realId = await start(admin.token, rows, false);
    await runImport(deps, await jobOf(realId), hooks);
    expect(hashes).toBe(120);
    const dry = await results(dryId);
    const done = await results(realId);
    // The accounts the dry run made up have other ids than the real ones; the rest is the same.
    const same = (r: RowResult) => ({ ...r, user_id: r.outcome === "create" ? "(new)" : r.user_id });
    expect(dry.map(same)).toEqual(done.map(same));
    const codes = new Set(done.map((r) => r.code));
    expect(codes).toEqual(new Set([null, "invalid_email", "duplicate_email", "insufficient_credits"]));
    expect(new Set(done.map((r) => r.welcome_credit))).toEqual(new Set([null, "given", "unpaid"]));
    expect(done[0]).toMatchObject({ outcome: "update", user_id: existing.id });
  });

  it("imports a chunk of rows in a few statements, not a round trip after another per row, the ledger exact", async () => {
    const { org, admin } = await anAdmin();
    await t.aProject(org.id, "Speech");
    const db = t.database.db;
    await grantToOrganization(db, {
      organizationId: org.id,
      amount: 1_000_000_000n,
      actorKind: "system",
      actorId: null,
      reason: "test",
      at: t.clock.now(),
    });
    await db("organization_welcome_credits").insert({ organization_id: org.id, amount: "1000000" });
    // 150 new people, half of them in a project, one in three with 2 initial credits; each gets the welcome.
    const rows = Array.from(
      { length: 150 },
      (_, i) => `${email()},P ${i},${org.slug},${i % 2 ? "Speech" : ""},,${i % 3 ? "" : "2"}`,
    );
    const id = await start(admin.token, rows, false);
    const statements: string[] = [];
    const seen = (q: { sql: string }) => statements.push(q.sql);
    db.on("query", seen);
    try {
      const counts = await runImport(
        { db, clock: t.clock, auth: { hasher: new PasswordHasher() } },
        await db("user_imports").where({ id }).first(),
        { seal: (p: string) => `sealed:${p}`, keepClaim: async () => true },
      );
      expect(counts).toEqual({ create: 150, update: 0, unchanged: 0, error: 0 });
    } finally {
      db.off("query", seen);
    }
    // One row used to cost about fifteen (its transaction, account, memberships, wallet, two locks and two
    // inserts per transfer, notification, record): now a chunk's rows share one statement per kind.
    expect(statements.length).toBeLessThan(rows.length);
    const wallets = await db("wallets").where({ organization_id: org.id });
    const orgWallet = wallets.find((w) => w.owner_kind === "organization");
    expect(orgWallet.balance).toBe(String(1_000_000_000 - 150 * 1_000_000 - 50 * 2_000_000));
    const people = wallets.filter((w) => w.owner_kind === "user").map((w) => Number(w.balance));
    expect(people.sort()).toEqual([...Array(100).fill(1_000_000), ...Array(50).fill(3_000_000)]);
    expect(
      await db("ledger_transactions").where({ organization_id: org.id, kind: "allocation" }).count({ c: "*" }).first(),
    ).toEqual({ c: "200" });
    expect(await checkLedgerInvariants(db)).toEqual([]);
    const records = await db("user_import_rows")
      .where({ import_id: id })
      .whereNotNull("sealed_password")
      .count({ c: "*" })
      .first();
    expect(records).toEqual({ c: "150" });
  });

  it("runs a chunk again row by row when someone made one of its accounts meanwhile: no row takes others with it", async () => {
    const { org, admin } = await anAdmin();
    const db = t.database.db;
    const emails = Array.from({ length: 20 }, () => email());
    const id = await start(
      admin.token,
      emails.map((e) => `${e},,${org.slug},,,`),
    );
    // Another writer makes the 7th person's account and commits only once the chunk has read and is
    // writing: the chunk's insert waits on it, then fails whole.
    const other = await db.transaction();
    await other("users").insert({ id: "usr_madeelsewhere0001", email: emails[6], password_hash: "x" });
    const running = runImport(
      { db, clock: t.clock, auth: { hasher: new PasswordHasher() } },
      await db("user_imports").where({ id }).first(),
      { seal: (p: string) => `sealed:${p}`, keepClaim: async () => true },
    );
    try {
      await until("the chunk waiting on the other writer", async () => {
        const r = await db.raw(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE 'insert into "users"%'`,
        );
        return r.rows[0].n > 0;
      });
      await other.commit();
    } finally {
      if (!other.isCompleted()) await other.rollback();
    }
    expect(await running).toEqual({ create: 19, update: 1, unchanged: 0, error: 0 });
    const results = (await db("user_import_rows")
      .where({ import_id: id })
      .orderBy("idx")
      .pluck("result")) as RowResult[];
    expect(results.map((r) => r.outcome)).toEqual(emails.map((_, i) => (i === 6 ? "update" : "create")));
    expect(results[6]).toMatchObject({ user_id: "usr_madeelsewhere0001" });
    expect(await db("users").whereIn("email", emails).count({ c: "*" }).first()).toEqual({ c: "20" });
  });
});
