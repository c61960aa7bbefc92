// Bulk user import and the welcome credit over real HTTP and Postgres, with the worker's import loop
// running beside the API: who may, the dry run, idempotency per email, per-row refusals, whole-file
// refusals, the results file, the temporary passwords given once, and the ledger to the unit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grantToOrganization } from "../../domain/credits/grant.ts";
import { checkLedgerInvariants } from "../../domain/credits/invariants.ts";
import { welcomeKey } from "../../domain/credits/welcome.ts";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  itBehavesPerRole,
  type RouteCase,
  startIdentityTestApi,
} from "../../domain/identity/identity.test-support.ts";
import { IMPORT_LIMITS } from "../../domain/identity/imports/importUsers.ts";

const HEADER = "email,name,organization,project,role,initial_credits";
const C = 1_000_000n;

describe("/api/v1/users/imports and the welcome credit", () => {
  let t: IdentityTestApi;
  let w: IdentityWorld;
  beforeAll(async () => {
    t = await startIdentityTestApi({ userImports: true });
    w = await anIdentityWorld(t);
  });
  afterAll(async () => {
    await t?.stop();
  });

  let n = 0;
  const email = (tag = "p") => `${tag}-${Date.now().toString(36)}-${n++}@import.test`;
  const csv = (...rows: string[]) => [HEADER, ...rows].join("\r\n");
  /** The import's job once it has ended (the worker's loop runs it), polled with a deadline. */
  const ended = async (token: string, id: string) => {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const r = await t.request("GET", `/api/v1/users/imports/${id}`, { token });
      if (r.body.state === "succeeded" || r.body.state === "failed") return r;
      if (Date.now() > deadline) throw new Error(`import ${id} still ${r.body.state}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  /**
   * Starts an import and answers its ended job, with the temporary passwords fetched (once) beside it;
   * a refused file answers the refusal.
   */
  const run = async (token: string, text: string, dryRun: boolean) => {
    const started = await t.request("POST", "/api/v1/users/imports", { token, json: { csv: text, dry_run: dryRun } });
    if (started.status !== 202) return started;
    const job = await ended(token, started.body.id);
    const pw = await t.request("POST", `/api/v1/users/imports/${started.body.id}/temporary-passwords`, { token });
    expect(pw.status, JSON.stringify(pw.body)).toBe(200);
    return { status: started.status, body: { ...job.body, temporary_passwords: pw.body.temporary_passwords } };
  };
  /** A fresh organization with an admin, its wallet funded with `credits`. */
  const anOrganization = async (credits = 0n) => {
    const org = await t.anOrganization(`Imp ${n++}`);
    const admin = await t.aUser();
    await t.member(admin, org.id, null, "org_admin");
    const project = await t.aProject(org.id, "Vision");
    if (credits > 0n)
      await grantToOrganization(t.database.db, {
        organizationId: org.id,
        amount: credits * C,
        actorKind: "system",
        actorId: null,
        reason: "test",
        at: t.clock.now(),
      });
    return { org, admin, project };
  };
  const balanceOf = async (organizationId: string, kind: "organization" | "user", ownerId: string) => {
    const row = await t.database
      .db("wallets")
      .where({ organization_id: organizationId, owner_kind: kind, owner_id: ownerId })
      .first("balance");
    return BigInt(row?.balance ?? 0);
  };
  const noJobRunning = async () => {
    const deadline = Date.now() + 120_000;
    while ((await t.database.db("user_imports").whereIn("state", ["queued", "running"]).first("id")) !== undefined) {
      if (Date.now() > deadline) throw new Error("an import job still queued or running after 120 s");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const counts = async () => {
    const [u, m, l, nt] = await Promise.all(
      ["users", "memberships", "ledger_transactions", "notifications"].map(async (table) =>
        Number((await t.database.db(table).count({ c: "*" }))[0]?.c),
      ),
    );
    return { u, m, l, nt };
  };

  const cases: RouteCase[] = [
    {
      name: "/users/imports (dry run)",
      method: "POST",
      path: () => "/api/v1/users/imports",
      body: (w) => ({ csv: csv(`${email()},Ada,${w.orgA.slug},,member,`), dry_run: true }),
      allowed: [
        { as: "superAdmin", status: 202 },
        { as: "adminA", status: 202 },
      ],
      refused: [
        { as: "orgMemberA", status: 403, why: "a member, not an admin" },
        { as: "projectAdminA", status: 403, why: "a project admin, not an organization admin" },
        { as: "outsider", status: 403, why: "no membership at all" },
      ],
      malformed: { csv: 42, dry_run: "yes" },
      // The allowed calls' jobs run on in the worker: their rows would change the digest under a refusal.
      settled: () => noJobRunning(),
    },
    {
      name: "/users/imports/:id",
      method: "GET",
      path: async (w) =>
        `/api/v1/users/imports/${(await run(w.adminA.token, csv(`${email()},,${w.orgA.id},,,`), true)).body.id}`,
      allowed: [
        { as: "adminA", status: 200 },
        { as: "superAdmin", status: 200 },
      ],
      refused: [
        { as: "adminB", status: 404, why: "another organization's admin" },
        { as: "orgMemberA", status: 404, why: "not the one who ran it" },
      ],
    },
    {
      name: "/users/imports/:id/temporary-passwords",
      method: "POST",
      path: async (w) => {
        const started = await t.request("POST", "/api/v1/users/imports", {
          token: w.adminA.token,
          json: { csv: csv(`${email()},,${w.orgA.id},,,`), dry_run: false },
        });
        await ended(w.adminA.token, started.body.id);
        return `/api/v1/users/imports/${started.body.id}/temporary-passwords`;
      },
      allowed: [{ as: "adminA", status: 200 }],
      refused: [
        { as: "superAdmin", status: 403, why: "sees the import, but did not start it" },
        { as: "adminB", status: 404, why: "another organization's admin" },
        { as: "orgMemberA", status: 404, why: "not the one who ran it" },
      ],
    },
    {
      name: "/organizations/:id/welcome-credit (read)",
      method: "GET",
      path: (w) => `/api/v1/organizations/${w.orgA.id}/welcome-credit`,
      allowed: [
        { as: "adminA", status: 200 },
        { as: "superAdmin", status: 200 },
      ],
      refused: [
        { as: "adminB", status: 404, why: "another organization" },
        { as: "orgMemberA", status: 403, why: "a member, not an admin" },
        { as: "outsider", status: 404, why: "no membership at all" },
      ],
    },
    {
      name: "/organizations/:id/welcome-credit (set)",
      method: "PUT",
      path: (w) => `/api/v1/organizations/${w.orgA.id}/welcome-credit`,
      body: () => ({ amount: "0" }),
      allowed: [
        { as: "adminA", status: 200 },
        { as: "superAdmin", status: 200 },
      ],
      refused: [
        { as: "adminB", status: 404, why: "another organization" },
        { as: "orgMemberA", status: 403, why: "a member, not an admin" },
      ],
      malformed: { amount: "1.5" },
    },
  ];
  itBehavesPerRole(cases, () => ({ t, w }));

  it("shows each row's outcome in a dry run and writes nothing", async () => {
    const { org, admin, project } = await anOrganization(100n);
    const existing = await t.aUser();
    const before = await counts();
    const r = await run(
      admin.token,
      csv(
        `${email()},New Person,${org.slug},,member,5`,
        `${existing.email},,${org.id},Vision,project_admin,`,
        `not-an-email,,${org.slug},,,`,
      ),
      true,
    );
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(r.body.dry_run).toBe(true);
    expect(r.body.counts).toEqual({ create: 1, update: 1, unchanged: 0, error: 1 });
    expect(r.body.rows.map((x: { outcome: string }) => x.outcome)).toEqual(["create", "update", "error"]);
    expect(r.body.rows[1]).toMatchObject({ organization_id: org.id, project_id: project.id });
    expect(r.body.rows[2]).toMatchObject({ line: 4, code: "invalid_email" });
    expect(r.body.temporary_passwords).toEqual([]);
    expect(await counts()).toEqual(before);
    expect(await balanceOf(org.id, "organization", org.id)).toBe(100n * C);
  });

  it("imports, gives a temporary password that must be changed, and changes nothing when run again", async () => {
    const { org, admin } = await anOrganization(100n);
    const a = email("ada");
    const b = email("bo");
    const file = csv(`${a},Ada,${org.slug},Vision,project_admin,2.5`, `${b},Bo,${org.slug},,org_admin,`);
    const first = await run(admin.token, file, false);
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    expect(first.body.counts).toEqual({ create: 2, update: 0, unchanged: 0, error: 0 });
    expect(first.body.temporary_passwords.map((p: { email: string }) => p.email)).toEqual([a, b]);
    const pw = first.body.temporary_passwords[0].password as string;
    const login = await t.request("POST", "/api/v1/auth/login", { json: { email: a, password: pw } });
    expect(login.status).toBe(200);
    expect(login.body.must_change_password).toBe(true);
    const wrong = await t.request("POST", "/api/v1/auth/login", { json: { email: a, password: `${pw}x` } });
    expect(wrong.status).toBe(401);
    const adaId = first.body.rows[0].user_id as string;
    expect(await balanceOf(org.id, "user", adaId)).toBe(2_500_000n);
    const bell = await t.database.db("notifications").where({ user_id: adaId, kind: "account.created" });
    expect(bell).toHaveLength(1);

    const before = await counts();
    const second = await run(admin.token, file, false);
    expect(second.body.counts).toEqual({ create: 0, update: 0, unchanged: 2, error: 0 });
    expect(second.body.temporary_passwords).toEqual([]);
    expect(await counts()).toEqual(before);
    expect(await balanceOf(org.id, "organization", org.id)).toBe(100n * C - 2_500_000n);
    expect(await checkLedgerInvariants(t.database.db)).toEqual([]);
  });

  it("refuses a formula per row and neutralises it in the results file", async () => {
    const { org, admin } = await anOrganization();
    const ok = email();
    const r = await run(
      admin.token,
      csv(
        `${email()},"=HYPERLINK(""http://x"")",${org.slug},,,`,
        `${email()},@SUM(A1),${org.slug},,,`,
        `${ok},Fine,${org.slug},,,`,
      ),
      false,
    );
    expect(r.body.rows.map((x: { code: string | null }) => x.code)).toEqual([
      "formula_injection",
      "formula_injection",
      null,
    ]);
    expect(await t.database.db("users").where({ email: ok }).first()).toBeDefined();
    const file = await fetch(`${t.api.url}${r.body.results_url}`, {
      headers: { Authorization: `Bearer ${admin.token}` },
    });
    expect(file.headers.get("content-type")).toMatch(/^text\/csv/);
    const text = await file.text();
    expect(text.split("\r\n")[0]).toBe(
      "line,email,name,organization,project,role,initial_credits,outcome,code,message,user_id,welcome_credit",
    );
    expect(text).toContain(`"'=HYPERLINK(""http://x"")"`);
    expect(text).toContain("'@SUM(A1)");
    expect(text).not.toMatch(/(^|,)[=@+-]/m);
    // Only whoever ran it (and super_admins) may read it; an expired token may not.
    const other = await fetch(`${t.api.url}${r.body.results_url}`, {
      headers: { Authorization: `Bearer ${w.adminB.token}` },
    });
    expect(other.status).toBe(404);
    expect((await other.json()).error.code).toBe("not_found");
    const expired = await fetch(`${t.api.url}${r.body.results_url}`, {
      headers: { Authorization: `Bearer ${await t.expiredTokenFor(admin.id)}` },
    });
    expect(expired.status).toBe(401);
    const bySuperAdmin = await fetch(`${t.api.url}${r.body.results_url}`, {
      headers: { Authorization: `Bearer ${w.superAdmin.token}` },
    });
    expect(await bySuperAdmin.text()).toBe(text);
  });

  it("reports duplicate emails, unknown organizations, projects and roles per row, importing the rest", async () => {
    const { org, admin } = await anOrganization();
    const dup = email("dup");
    const good = email("good");
    const r = await run(
      admin.token,
      csv(
        `${dup},,${org.slug},,,`,
        `${dup.toUpperCase()},,${org.slug},,,`,
        `${email()},,no-such-org,,,`,
        `${email()},,${org.slug},No Such Project,,`,
        `${email()},,${org.slug},,owner,`,
        `${email()},,${org.slug},,,lots`,
        `${email()},,${org.slug}`,
        `${good},,${org.slug},,,`,
      ),
      false,
    );
    expect(r.body.rows.map((x: { code: string | null }) => x.code)).toEqual([
      "duplicate_email",
      "duplicate_email",
      "unknown_organization",
      "unknown_project",
      "invalid_role",
      "invalid_credits",
      "wrong_column_count",
      null,
    ]);
    expect(await t.database.db("users").where({ email: dup }).first()).toBeUndefined();
    expect(await t.database.db("users").where({ email: good }).first()).toBeDefined();
  });

  it("keeps an organization admin to its own organizations, row by row", async () => {
    const mine = await anOrganization();
    const theirs = await anOrganization();
    // A member (not an admin) of `theirs`: it can see it, may not import into it.
    await t.member(mine.admin, theirs.org.id, null, "member");
    const r = await run(
      mine.admin.token,
      csv(
        `${email()},,${theirs.org.slug},,,`,
        `${email()},,${w.orgB.slug},,,`,
        `${email()},,,,,`,
        `${email()},,${mine.org.slug},,,`,
      ),
      false,
    );
    expect(r.body.rows.map((x: { code: string | null }) => x.code)).toEqual([
      "forbidden",
      "unknown_organization",
      "missing_organization",
      null,
    ]);
  });

  it("never half-imports a row: initial credits the wallet cannot pay leave no account", async () => {
    const { org, admin } = await anOrganization(3n);
    const rich = email("rich");
    const poor = email("poor");
    const r = await run(admin.token, csv(`${rich},,${org.slug},,,2`, `${poor},,${org.slug},,,2`), false);
    expect(r.body.rows.map((x: { code: string | null }) => x.code)).toEqual([null, "insufficient_credits"]);
    expect(await t.database.db("users").where({ email: poor }).first()).toBeUndefined();
    expect(await balanceOf(org.id, "organization", org.id)).toBe(1n * C);
    // The dry run sees the same, because it draws on the balance row by row too.
    const dry = await run(admin.token, csv(`${email()},,${org.slug},,,1`, `${email()},,${org.slug},,,1`), true);
    expect(dry.body.rows.map((x: { code: string | null }) => x.code)).toEqual([null, "insufficient_credits"]);
    expect(await checkLedgerInvariants(t.database.db)).toEqual([]);
  });

  it("carries what earlier rows drew across the dry run's chunks of rows", async () => {
    const { org, admin } = await anOrganization(3n);
    const filler = Array.from({ length: 60 }, () => `${email("f")},,${org.slug},,,`);
    const dry = await run(
      admin.token,
      csv(`${email()},,${org.slug},,,2`, ...filler, `${email()},,${org.slug},,,2`),
      true,
    );
    expect(dry.body.counts).toEqual({ create: 61, update: 0, unchanged: 0, error: 1 });
    expect(dry.body.rows.at(-1)).toMatchObject({ line: 63, code: "insufficient_credits" });
    expect(await balanceOf(org.id, "organization", org.id)).toBe(3n * C);
  });

  describe("refuses a whole file it cannot read, importing nothing", () => {
    const refused = async (text: string, status: number, code: string) => {
      const before = await counts();
      const r = await run(w.superAdmin.token, text, false);
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      expect(r.body.error.code).toBe(code);
      expect(r.body.error.request_id).toEqual(expect.any(String));
      expect(await counts()).toEqual(before);
      return r.body.error;
    };
    it("an unterminated quote", async () => {
      const e = await refused(csv(`${email()},"Ada,${w.orgA.slug},,,`), 400, "import_csv_malformed");
      expect(e.details).toMatchObject({ reason: "unterminated_quote", line: 2 });
    });
    it("an unknown column", async () => {
      const e = await refused(`email,salary\r\n${email()},1`, 400, "import_csv_malformed");
      expect(e.details).toMatchObject({ reason: "unknown_column", column: "salary" });
    });
    it("a header and no rows", () => refused(HEADER, 400, "import_csv_malformed"));
    it("more rows than the bound", async () => {
      const rows = Array.from({ length: IMPORT_LIMITS.maxRows + 1 }, (_, i) => `r${i}@x.test`);
      const e = await refused(`email\n${rows.join("\n")}`, 400, "import_too_many_rows");
      expect(e.details).toEqual({ limit_rows: IMPORT_LIMITS.maxRows, rows: IMPORT_LIMITS.maxRows + 1 });
    });
    it("a file larger than the bound", async () => {
      const e = await refused(`email\n${"a".repeat(IMPORT_LIMITS.maxBytes)}`, 413, "import_file_too_large");
      expect(e.details.limit_bytes).toBe(IMPORT_LIMITS.maxBytes);
    });
  });

  it("keeps no copy of the file in the audit log, for an import accepted or refused", async () => {
    const who = email("audited");
    await run(w.superAdmin.token, csv(`${who},Ada Audit,${w.orgA.slug},,member,`), true);
    await run(w.superAdmin.token, csv(`${who},"Ada Audit,${w.orgA.slug},,,`), false);
    const rows = await t.database.db("audit_log").where("action", "user.import").orderBy("id", "desc").limit(2);
    expect(rows.map((r) => r.status).sort()).toEqual([202, 400]);
    for (const r of rows) {
      expect(JSON.stringify(r)).not.toContain(who);
      expect(r.diff.after).toEqual({
        dry_run: expect.any(Boolean),
        csv: expect.stringMatching(/characters, not kept$/),
      });
    }
  });

  describe("as a background job", () => {
    it("answers 202 with the job's Location at once, then its progress and outcome", async () => {
      const { org, admin } = await anOrganization();
      const rows = Array.from({ length: 120 }, () => `${email("bulk")},,${org.slug},,,`);
      const started = await t.request("POST", "/api/v1/users/imports", {
        token: admin.token,
        json: { csv: csv(...rows, "not-an-email,,,,,"), dry_run: false },
      });
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      expect(started.headers.get("location")).toBe(`/api/v1/users/imports/${started.body.id}`);
      expect(started.body).toMatchObject({ state: "queued", rows_total: 121, rows_done: 0, rows: [] });
      const job = await ended(admin.token, started.body.id);
      expect(job.body).toMatchObject({
        state: "succeeded",
        rows_total: 121,
        rows_done: 121,
        counts: { create: 120, update: 0, unchanged: 0, error: 1 },
        failure: null,
        temporary_passwords: { state: "held", count: 120 },
      });
      expect(job.body.rows).toHaveLength(121);
      expect(job.body.rows.map((r: { line: number }) => r.line)).toEqual(Array.from({ length: 121 }, (_, i) => i + 2));
    });

    it("keeps the temporary passwords sealed until the importer fetches them once, then erases them", async () => {
      const { org, admin } = await anOrganization();
      const a = email("sealed");
      const started = await t.request("POST", "/api/v1/users/imports", {
        token: admin.token,
        json: { csv: csv(`${a},,${org.slug},,,`), dry_run: false },
      });
      await ended(admin.token, started.body.id);
      const stored = await t.database.db("user_import_rows").where({ import_id: started.body.id }).first();
      expect(stored.sealed_password).toMatch(/^enc:v1:/);
      const url = `/api/v1/users/imports/${started.body.id}/temporary-passwords`;
      const first = await t.request("POST", url, { token: admin.token });
      expect(first.status).toBe(200);
      const [pw] = first.body.temporary_passwords;
      expect(pw.email).toBe(a);
      expect(stored.sealed_password).not.toContain(pw.password);
      const login = await t.request("POST", "/api/v1/auth/login", { json: { email: a, password: pw.password } });
      expect(login.status).toBe(200);
      const again = await t.request("POST", url, { token: admin.token });
      expect(again.status).toBe(410);
      expect(again.body.error).toMatchObject({ code: "import_passwords_gone", details: { reason: "fetched" } });
      expect(
        await t.database.db("user_import_rows").whereNotNull("sealed_password").where({ import_id: started.body.id }),
      ).toEqual([]);
      const job = await t.request("GET", `/api/v1/users/imports/${started.body.id}`, { token: admin.token });
      expect(job.body.temporary_passwords).toMatchObject({ state: "fetched", expires_at: null });
    });

    it("gives two fetches at once the passwords only once", async () => {
      const { org, admin } = await anOrganization();
      const started = await t.request("POST", "/api/v1/users/imports", {
        token: admin.token,
        json: { csv: csv(`${email()},,${org.slug},,,`, `${email()},,${org.slug},,,`), dry_run: false },
      });
      await ended(admin.token, started.body.id);
      const url = `/api/v1/users/imports/${started.body.id}/temporary-passwords`;
      const both = await Promise.all([1, 2].map(() => t.request("POST", url, { token: admin.token })));
      expect(both.map((r) => r.status).sort()).toEqual([200, 410]);
      expect(both.find((r) => r.status === 200)?.body.temporary_passwords).toHaveLength(2);
    });

    it("answers 400 validation_failed to a malformed import id on every route", async () => {
      const bad = "x".repeat(200);
      for (const [method, path] of [
        ["GET", `/api/v1/users/imports/${bad}`],
        ["GET", `/api/v1/users/imports/${bad}/results.csv`],
        ["POST", `/api/v1/users/imports/${bad}/temporary-passwords`],
      ] as const) {
        const r = await t.request(method, path, { token: w.adminA.token });
        expect(r.status, path).toBe(400);
        expect(r.body.error.code).toBe("validation_failed");
      }
    });
  });

  describe("the welcome credit", () => {
    const setWelcome = (token: string, orgId: string, amount: string) =>
      t.request("PUT", `/api/v1/organizations/${orgId}/welcome-credit`, { token, json: { amount } });

    it("is paid once from the organization's wallet, whether imported, re-imported, removed or re-added", async () => {
      const { org, admin } = await anOrganization(50n);
      expect((await setWelcome(admin.token, org.id, String(5n * C))).body).toMatchObject({
        organization_id: org.id,
        amount: "5000000",
        updated_by: admin.id,
      });
      const e = email("welcome");
      const file = csv(`${e},,${org.slug},,,1`);
      const first = await run(admin.token, file, false);
      expect(first.body.rows[0]).toMatchObject({ outcome: "create", welcome_credit: "given" });
      const userId = first.body.rows[0].user_id as string;
      expect(await balanceOf(org.id, "user", userId)).toBe(6n * C);

      expect((await run(admin.token, file, false)).body.rows[0]).toMatchObject({
        outcome: "unchanged",
        welcome_credit: null,
      });
      const removed = await t.request("DELETE", `/api/v1/organizations/${org.id}/members/${userId}`, {
        token: admin.token,
      });
      expect(removed.status).toBe(204);
      const readded = await t.request("POST", `/api/v1/organizations/${org.id}/members`, {
        token: admin.token,
        json: { user_id: userId, role: "member" },
      });
      expect(readded.status).toBe(201);
      const reimported = await run(admin.token, file, false);
      expect(reimported.body.rows[0].outcome).toBe("unchanged");

      expect(await balanceOf(org.id, "user", userId)).toBe(6n * C);
      expect(await balanceOf(org.id, "organization", org.id)).toBe(44n * C);
      const paid = await t.database.db("ledger_transactions").where({ idempotency_key: welcomeKey(org.id, userId) });
      expect(paid).toHaveLength(1);
      expect(paid[0]).toMatchObject({ kind: "allocation", amount: "5000000", organization_id: org.id });
      expect(await checkLedgerInvariants(t.database.db)).toEqual([]);
    });

    it("is paid to members added by hand and to accounts created in the organization", async () => {
      const { org, admin } = await anOrganization(20n);
      await setWelcome(admin.token, org.id, String(2n * C));
      const someone = await t.aUser();
      const added = await t.request("POST", `/api/v1/organizations/${org.id}/members`, {
        token: admin.token,
        json: { email: someone.email, role: "member" },
      });
      expect(added.status).toBe(201);
      const created = await t.request("POST", "/api/v1/users", {
        token: admin.token,
        json: { email: email(), password: "a temporary password", organization_id: org.id },
      });
      expect(created.status).toBe(201);
      expect(await balanceOf(org.id, "user", someone.id)).toBe(2n * C);
      expect(await balanceOf(org.id, "user", created.body.id)).toBe(2n * C);
      expect(await balanceOf(org.id, "organization", org.id)).toBe(16n * C);
    });

    it("still adds the member when the organization cannot pay, and tells the admin", async () => {
      const { org, admin } = await anOrganization(1n);
      await setWelcome(admin.token, org.id, String(5n * C));
      const r = await run(admin.token, csv(`${email()},,${org.slug},,,`), false);
      expect(r.body.rows[0]).toMatchObject({ outcome: "create", welcome_credit: "unpaid", code: null });
      expect(r.body.rows[0].message).toMatch(/welcome credit of 5 NOT paid/);
      const someone = await t.aUser();
      const added = await t.request("POST", `/api/v1/organizations/${org.id}/members`, {
        token: admin.token,
        json: { user_id: someone.id, role: "member" },
      });
      expect(added.status).toBe(201);
      const told = await t.database.db("notifications").where({ user_id: admin.id, kind: "credits.welcome_unpaid" });
      expect(told).toHaveLength(1);
      expect(told[0].body).toContain(someone.email);
      expect(await balanceOf(org.id, "organization", org.id)).toBe(1n * C);
      expect(await checkLedgerInvariants(t.database.db)).toEqual([]);
    });
  });
});
