// /api/v1/audit-logs over HTTP with the real API, authenticator and database: rows written by real
// mutating calls, filters, scope per role, BOLA, the CSV export read back by an independent parser
// (csv-parse), the append-only trigger, the hash chain's verification and retention's purge.
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertAuditRecord } from "../../db/operations/audit/insertAuditRecord.ts";
import { purgeAuditRecords } from "../../db/operations/audit/purgeAuditRecords.ts";
import {
  anIdentityWorld,
  type IdentityTestApi,
  type IdentityWorld,
  startIdentityTestApi,
} from "../../domain/identity/identity.test-support.ts";

describe("/api/v1/audit-logs", () => {
  let t: IdentityTestApi;
  let w: IdentityWorld;
  let start: Date;

  const csv = async (path: string, token: string) => {
    const res = await fetch(t.api.url + path, { headers: { Authorization: `Bearer ${token}` } });
    return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
  };

  beforeAll(async () => {
    t = await startIdentityTestApi();
    w = await anIdentityWorld(t);
    start = new Date(t.clock.now().getTime() - 1000);
    // Real calls: two projects made by each organization's admin, one refused attempt by a member.
    for (const [admin, org] of [
      [w.adminA, w.orgA],
      [w.adminB, w.orgB],
    ] as const) {
      const r = await t.request("POST", "/api/v1/projects", {
        token: admin.token,
        json: { organization_id: org.id, name: `audited ${org.name}` },
        headers: { "X-Request-Id": `req-${org.name.replace(" ", "")}` },
      });
      expect(r.status).toBe(201);
    }
    const denied = await t.request("POST", "/api/v1/projects", {
      token: w.memberA.token,
      json: { organization_id: w.orgA.id, name: "not mine to make" },
    });
    expect(denied.status).toBe(403);
    // Cells a spreadsheet would run as formulas, written as the system would.
    await insertAuditRecord(t.database.db, {
      action: "system.test",
      actorKind: "system",
      actorId: null,
      actorReason: '=HYPERLINK("http://evil.test","x")',
      organizationId: w.orgA.id,
      targetKind: "thing",
      targetId: "+1-2",
      requestId: "@SUM(A1)",
      sourceIp: "\tcmd",
      outcome: "success",
      status: 200,
      details: { note: 'quote " and, comma\r\nnewline' },
      at: t.clock.now(),
    });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("records every mutating call with actor, request id, source address, outcome and a redacted diff", async () => {
    const r = await t.request("GET", "/api/v1/audit-logs?action=project.create&outcome=success", {
      token: w.superAdmin.token,
    });
    expect(r.status).toBe(200);
    expect(r.body.pagination.total).toBe(2);
    const a = r.body.data.find((e: { organization_id: string }) => e.organization_id === w.orgA.id);
    expect(a).toMatchObject({
      action: "project.create",
      outcome: "success",
      status: 201,
      actor: { kind: "user", id: w.adminA.id, reason: null },
      request_id: "req-OrgA",
      resource: { type: "project" },
      diff: { after: { organization_id: w.orgA.id, name: "audited Org A" } },
    });
    expect(a.source_ip).toMatch(/127\.0\.0\.1/);
    expect(a.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("records a denied attempt as denied", async () => {
    const r = await t.request("GET", "/api/v1/audit-logs?outcome=denied", { token: w.superAdmin.token });
    expect(r.body.data).toEqual([
      expect.objectContaining({
        action: "project.create",
        actor: expect.objectContaining({ id: w.memberA.id }),
        status: 403,
      }),
    ]);
  });

  it("redacts secrets in the diff", async () => {
    const u = await t.request("POST", "/api/v1/users", {
      token: w.adminA.token,
      json: { email: "audited-user@example.test", password: "a very secret password", organization_id: w.orgA.id },
    });
    expect(u.status).toBe(201);
    const r = await t.request("GET", "/api/v1/audit-logs?action=user.create", { token: w.adminA.token });
    expect(r.body.data[0].diff.after).toMatchObject({ email: "audited-user@example.test", password: "[redacted]" });
    expect(JSON.stringify(r.body)).not.toContain("a very secret password");
  });

  it("filters by action prefix, actor, resource, organization and time range", async () => {
    const q = (s: string) => t.request("GET", `/api/v1/audit-logs?${s}`, { token: w.superAdmin.token });
    expect((await q("action=project.*")).body.pagination.total).toBe(3);
    expect((await q(`actor=${w.adminB.id}`)).body.data.map((e: { action: string }) => e.action)).toEqual([
      "project.create",
    ]);
    expect((await q("resource_type=thing&resource_id=%2B1-2")).body.pagination.total).toBe(1);
    expect((await q(`organization=${w.orgB.id}`)).body.pagination.total).toBe(1);
    const future = new Date(t.clock.now().getTime() + 3_600_000).toISOString();
    expect((await q(`from=${encodeURIComponent(future)}`)).body.pagination.total).toBe(0);
    expect((await q(`from=${encodeURIComponent(start.toISOString())}&size=2`)).body.data).toHaveLength(2);
  });

  it("answers each role its scope, never 403, and hides other organizations' rows (BOLA)", async () => {
    const total = async (token: string, extra = "") =>
      (await t.request("GET", `/api/v1/audit-logs?size=100${extra}`, { token })).body;
    const all = await total(w.superAdmin.token);
    const a = await total(w.adminA.token);
    expect(a.data.length).toBeGreaterThan(0);
    expect(a.data.every((e: { organization_id: string }) => e.organization_id === w.orgA.id)).toBe(true);
    expect(all.pagination.total).toBeGreaterThan(a.pagination.total);
    // Asking for another organization is the scope: nothing.
    expect((await total(w.adminA.token, `&organization=${w.orgB.id}`)).pagination.total).toBe(0);
    for (const u of [w.memberA, w.projectAdminA, w.orgMemberA, w.outsider]) {
      const r = await t.request("GET", "/api/v1/audit-logs", { token: u.token });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ data: [], pagination: { page: 1, size: 20, total: 0, total_exact: true } });
    }
  });

  it("refuses an expired token, unknown filters and inverted ranges with the envelope", async () => {
    const expired = await t.request("GET", "/api/v1/audit-logs", { token: await t.expiredTokenFor(w.superAdmin.id) });
    expect(expired.status).toBe(401);
    expect(expired.body.error.code).toBe("token_expired");
    const unknown = await t.request("GET", "/api/v1/audit-logs?colour=red", { token: w.superAdmin.token });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe("validation_failed");
    const inverted = await t.request("GET", "/api/v1/audit-logs?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z", {
      token: w.superAdmin.token,
    });
    expect(inverted.status).toBe(400);
    expect(inverted.body.error.details.issues[0]).toMatchObject({ path: ["query", "to"] });
    const badDate = await t.request("GET", "/api/v1/audit-logs?from=yesterday", { token: w.superAdmin.token });
    expect(badDate.status).toBe(400);
    const badOutcome = await t.request("GET", "/api/v1/audit-logs?outcome=failure", { token: w.superAdmin.token });
    expect(badOutcome.status).toBe(400);
  });

  describe("export", () => {
    const range = () =>
      `from=${encodeURIComponent(start.toISOString())}&to=${encodeURIComponent(new Date(t.clock.now().getTime() + 60_000).toISOString())}`;

    it("streams RFC 4180 CSV that a real parser reads back, formulas defused", async () => {
      const r = await csv(`/api/v1/audit-logs/export?${range()}`, w.superAdmin.token);
      expect(r.status).toBe(200);
      expect(r.type).toContain("text/csv");
      expect(r.text.split("\r\n")[0]).toBe(
        "seq,at,actor_kind,actor_id,actor_reason,organization_id,project_id,cluster_id,action,target_kind,target_id,outcome,status,request_id,source_ip,details,diff,hash",
      );
      const rows = parse(r.text, { columns: true }) as Record<string, string>[];
      const listed = await t.request("GET", `/api/v1/audit-logs?size=100&${range()}`, { token: w.superAdmin.token });
      // The export itself is audited only after it is sent: what was listed before is what was exported.
      expect(rows.map((x) => x.seq)).toEqual(
        listed.body.data.map((e: { id: string }) => e.id).filter((id: string) => rows.some((x) => x.seq === id)),
      );
      expect(rows.length).toBeGreaterThanOrEqual(5);
      const evil = rows.find((x) => x.action === "system.test") as Record<string, string>;
      expect(evil.actor_reason).toBe(`'=HYPERLINK("http://evil.test","x")`);
      expect(evil.target_id).toBe("'+1-2");
      expect(evil.request_id).toBe("'@SUM(A1)");
      expect(evil.source_ip).toBe("'\tcmd");
      expect(JSON.parse(evil.details as string)).toEqual({ note: 'quote " and, comma\r\nnewline' });
      for (const x of rows) expect(x.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    });

    it("is scoped like the list and is itself audited", async () => {
      const r = await csv(`/api/v1/audit-logs/export?${range()}`, w.adminB.token);
      const rows = parse(r.text, { columns: true }) as Record<string, string>[];
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.every((x) => x.organization_id === w.orgB.id)).toBe(true);
      const none = await csv(`/api/v1/audit-logs/export?${range()}`, w.memberB.token);
      expect(parse(none.text, { columns: true })).toEqual([]);
      // An export's row is written once the response has ended, so its reader may be a moment ahead of it.
      const exportsAudited = async () =>
        (
          await t.request("GET", "/api/v1/audit-logs?action=audit_log.export", {
            token: w.superAdmin.token,
          })
        ).body;
      await expect
        .poll(async () => (await exportsAudited()).data.map((e: { actor: { id: string } }) => e.actor.id))
        .toEqual(expect.arrayContaining([w.superAdmin.id, w.adminB.id, w.memberB.id]));
      const audited = await exportsAudited();
      expect(audited.data.find((e: { actor: { id: string } }) => e.actor.id === w.adminB.id).details.rows).toBe(
        rows.length,
      );
    });

    it("refuses a range or a row count beyond its bounds before sending a row", async () => {
      const long = await t.request(
        "GET",
        "/api/v1/audit-logs/export?from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z",
        {
          token: w.superAdmin.token,
        },
      );
      expect(long.status).toBe(422);
      expect(long.body.error).toMatchObject({ code: "export_too_large", details: { max_days: 366 } });
      const missing = await t.request("GET", "/api/v1/audit-logs/export", { token: w.superAdmin.token });
      expect(missing.status).toBe(400);
      expect(missing.body.error.details.issues.map((i: { path: string[] }) => i.path.join("."))).toEqual(
        expect.arrayContaining(["query.from", "query.to"]),
      );
      const small = { ...t.deps.config.audit.export };
      t.deps.config.audit.export.maxRows = 2;
      try {
        const many = await t.request("GET", `/api/v1/audit-logs/export?${range()}`, { token: w.superAdmin.token });
        expect(many.status).toBe(422);
        expect(many.body.error.details).toMatchObject({ max_rows: 2, matched_rows_at_least: 3 });
      } finally {
        t.deps.config.audit.export = small;
      }
    });
  });

  describe("integrity", () => {
    it("refuses UPDATE, DELETE and TRUNCATE in the database", async () => {
      const db = t.database.db;
      await expect(db("audit_log").update({ action: "rewritten" })).rejects.toThrow(/append-only/);
      await expect(db("audit_log").delete()).rejects.toThrow(/append-only/);
      await expect(db.raw("TRUNCATE audit_log")).rejects.toThrow(/append-only/);
    });

    it("verifies the chain, and names the first row changed behind the trigger's back", async () => {
      const ok = await t.request("GET", "/api/v1/audit-logs/verify", { token: w.superAdmin.token });
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ valid: true, first_broken: null });
      expect(ok.body.checked).toBeGreaterThan(5);
      const notAdmin = await t.request("GET", "/api/v1/audit-logs/verify", { token: w.adminA.token });
      expect(notAdmin.status).toBe(403);

      // Someone with the database owner's rights tampers: triggers off, one row rewritten.
      const victim = (await t.database.db("audit_log").where({ action: "project.create" }).orderBy("seq").first()) as {
        seq: string;
      };
      await t.database.db.transaction(async (tx) => {
        await tx.raw("SET LOCAL session_replication_role = replica");
        await tx("audit_log").where({ seq: victim.seq }).update({ actor_id: "usr_somebody_else" });
      });
      const broken = await t.request("GET", "/api/v1/audit-logs/verify", { token: w.superAdmin.token });
      expect(broken.body).toMatchObject({ valid: false, first_broken: { id: String(victim.seq), problem: "hash" } });

      // A better-informed attacker recomputes the rewritten row's hash with the database's own function and
      // points the next row at it. Only the chain catches that: the next row's hash covers its prev_hash.
      const next = String(BigInt(victim.seq) + 1n);
      await t.database.db.transaction(async (tx) => {
        await tx.raw("SET LOCAL session_replication_role = replica");
        await tx.raw("UPDATE audit_log a SET hash = berth_audit_row_hash(a.prev_hash, a) WHERE seq = ?", [victim.seq]);
        await tx.raw("UPDATE audit_log SET prev_hash = (SELECT hash FROM audit_log WHERE seq = ?) WHERE seq = ?", [
          victim.seq,
          next,
        ]);
      });
      const relinked = await t.request("GET", "/api/v1/audit-logs/verify", { token: w.superAdmin.token });
      expect(relinked.body).toMatchObject({ valid: false, first_broken: { id: next, problem: "hash" } });
      // The refused verify above (403) is recorded as a denied attempt.
      const denied = await t.request("GET", "/api/v1/audit-logs?action=verifyAuditLog", { token: w.superAdmin.token });
      expect(denied.body.data[0]).toMatchObject({ outcome: "denied", actor: { id: w.adminA.id } });
    });

    it("purges by retention only a prefix of the chain, in small batches", async () => {
      const db = t.database.db;
      const before = Number((await db("audit_log").count({ n: "*" }).first())?.n);
      const future = new Date(t.clock.now().getTime() + 86_400_000);
      expect(await purgeAuditRecords(db, future, 2)).toBe(2);
      const after = Number((await db("audit_log").count({ n: "*" }).first())?.n);
      expect(after).toBe(before - 2);
      // A plain DELETE is still refused outside the purge's transaction.
      await expect(db("audit_log").delete()).rejects.toThrow(/append-only/);
    });
  });

  describe("totals of a long log", () => {
    it("counts the whole log from the chain, small filters exactly, and estimates beyond 10,000 rows", async () => {
      const db = t.database.db;
      // 10,050 rows of orgA through the chain trigger, like any write.
      await db.raw(
        `INSERT INTO audit_log (at, actor_kind, actor_id, organization_id, action, outcome, status, details)
         SELECT now(), 'user', 'usr_bulk', ?, 'bulk.total', 'success', 200, '{}'::jsonb FROM generate_series(1, 10050)`,
        [w.orgA.id],
      );
      await db.raw("ANALYZE audit_log");
      const q = (s: string, token = w.superAdmin.token) => t.request("GET", `/api/v1/audit-logs?${s}`, { token });

      const all = await q("size=1");
      const counted = Number((await db("audit_log").count({ n: "*" }).first())?.n);
      expect(all.body.pagination).toMatchObject({ total: counted, total_exact: true });

      const few = await q("action=audit_log.*");
      const exports = Number(
        (await db("audit_log").where("action", "like", "audit_log.%").count({ n: "*" }).first())?.n,
      );
      expect(exports).toBeGreaterThan(0);
      expect(few.body.pagination).toMatchObject({ total: exports, total_exact: true });

      const many = await q("action=bulk.total&size=5");
      expect(many.body.data).toHaveLength(5);
      expect(many.body.pagination.total_exact).toBe(false);
      expect(many.body.pagination.total).toBeGreaterThan(10_000);
      expect(many.body.pagination.total).toBeLessThan(20_000);

      // An organization admin's scope is a filter too: estimated beyond the bound, exact below it.
      const scopedA = await q("size=1", w.adminA.token);
      expect(scopedA.body.pagination.total_exact).toBe(false);
      expect(scopedA.body.pagination.total).toBeGreaterThan(10_000);
      const scopedB = await q("size=1", w.adminB.token);
      expect(scopedB.body.pagination).toMatchObject({ total_exact: true });
      expect(scopedB.body.pagination.total).toBeLessThan(10);
    });
  });
});
