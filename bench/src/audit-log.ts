// The audit log at scale: list latency per filter (and the index Postgres picks for it), and the CSV
// export's rows/s and the API process's peak memory while it streams every row.
//   BENCH_AUDIT_ROWS=1000000 node bench/src/audit-log.ts        (default 300000 rows)
// Baselines in the same run: the list's SQL sent straight to Postgres (no HTTP, no JSON, no count), the
// exact count(*) of each filter (what a total counted row by row would cost per page; the list answers
// the chain's length, a count capped at 10,000, or Postgres' estimate instead: auditTotal.ts), and the
// export's rows read through the same keyset batches without CSV or HTTP. The API server runs in its
// own process (api-list-server.ts); its peak RSS is /proc/<pid>/status VmHWM.
import { performance } from "node:perf_hooks";
import { connect } from "@berth/api";
import { peakRssBytes, rssBytes } from "@berth/e2e";
import { startServer, startUsersBed, stopServer } from "./api-list-bed.ts";
import { upperPercentile } from "./kit/percentile.ts";

const ROWS = Number(process.env.BENCH_AUDIT_ROWS ?? 300_000);
const SAMPLES = Number(process.env.BENCH_AUDIT_SAMPLES ?? 100);
const DAY = 86_400_000;

const bed = await startUsersBed();
const db = connect(bed.env.DATABASE_URL as string, { poolMax: 4 });
try {
  const now = Date.now();
  const t0 = performance.now();
  // The insert trigger chains each row: seeding goes through it like any write (no shortcut past the chain).
  for (let done = 0; done < ROWS; done += 20_000) {
    const n = Math.min(20_000, ROWS - done);
    await db.raw(
      `INSERT INTO audit_log (at, actor_kind, actor_id, organization_id, project_id, action, target_kind, target_id,
                              request_id, source_ip, outcome, status, details)
       SELECT to_timestamp((? - (? - g) * (300.0 * 86400000 / ?)) / 1000.0),
              'user', 'usr_' || (g % 1000), 'org_' || (g % 50), CASE WHEN g % 3 = 0 THEN 'prj_' || (g % 200) END,
              (ARRAY['session.create','session.pause','session.resume','session.terminate','project.create',
                     'user.create','credits.request.create','volume.create','cluster.update','offering.update'])[1 + g % 10],
              'session', 'ses_' || g, 'req-' || g, '10.0.' || (g % 250) || '.1',
              CASE WHEN g % 100 = 0 THEN 'denied' WHEN g % 25 = 0 THEN 'failed' ELSE 'success' END,
              CASE WHEN g % 100 = 0 THEN 403 WHEN g % 25 = 0 THEN 409 ELSE 201 END, '{}'::jsonb
         FROM generate_series(?::bigint, ?::bigint) g`,
      [now, ROWS, ROWS, done + 1, done + n],
    );
  }
  await db.raw("ANALYZE audit_log");
  const seedS = (performance.now() - t0) / 1000;
  console.log(
    `seeded ${ROWS} chained rows in ${seedS.toFixed(1)} s (${Math.round(ROWS / seedS)} rows/s through the trigger)`,
  );

  const { url, child } = await startServer("api", bed.env);
  const pid = child.pid as number;
  const auth = { Authorization: `Bearer ${bed.token}` };
  try {
    const from = new Date(now - 7 * DAY).toISOString();
    const to = new Date(now).toISOString();
    const filters: { name: string; q: string; sql: string; args: unknown[] }[] = [
      { name: "no filter", q: "", sql: "TRUE", args: [] },
      { name: "actor", q: "actor=usr_42", sql: "actor_id = ?", args: ["usr_42"] },
      { name: "action prefix session.*", q: "action=session.*", sql: "action LIKE ?", args: ["session.%"] },
      { name: "organization", q: "organization=org_7", sql: "organization_id = ?", args: ["org_7"] },
      {
        name: "resource",
        q: "resource_type=session&resource_id=ses_4242",
        sql: "target_kind = ? AND target_id = ?",
        args: ["session", "ses_4242"],
      },
      { name: "outcome denied", q: "outcome=denied", sql: "outcome = ?", args: ["denied"] },
      {
        name: "last 7 days",
        q: `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`,
        sql: "at >= ? AND at < ?",
        args: [new Date(from), new Date(to)],
      },
      {
        name: "org + denied + 7 days",
        q: `organization=org_7&outcome=denied&from=${encodeURIComponent(from)}`,
        sql: "organization_id = ? AND outcome = ? AND at >= ?",
        args: ["org_7", "denied", new Date(from)],
      },
    ];
    console.log(
      `\nGET /api/v1/audit-logs (page 1, size 20, with total) over ${ROWS} rows, ${SAMPLES} sequential requests each`,
    );
    console.log(
      "filter                      api p50   api p99   sql p50 (baseline)   count(*) p50   total        index",
    );
    for (const f of filters) {
      const api: number[] = [];
      for (let i = 0; i < SAMPLES + 5; i++) {
        const s = performance.now();
        const r = await fetch(`${url}/api/v1/audit-logs?${f.q}`, { headers: auth });
        await r.arrayBuffer();
        if (r.status !== 200) throw new Error(`${f.name}: ${r.status}`);
        if (i >= 5) api.push(performance.now() - s);
      }
      const sqlText = `SELECT * FROM audit_log WHERE ${f.sql} ORDER BY seq DESC LIMIT 20`;
      const sql: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const s = performance.now();
        await db.raw(sqlText, f.args as never[]);
        sql.push(performance.now() - s);
      }
      const counts: number[] = [];
      let exact = 0;
      for (let i = 0; i < 5; i++) {
        const s = performance.now();
        exact = Number(
          (await db.raw(`SELECT count(*) AS n FROM audit_log WHERE ${f.sql}`, f.args as never[])).rows[0].n,
        );
        counts.push(performance.now() - s);
      }
      const page = (await (await fetch(`${url}/api/v1/audit-logs?${f.q}`, { headers: auth })).json()) as {
        pagination: { total: number; total_exact: boolean };
      };
      const total = `${page.pagination.total_exact ? "" : "~"}${page.pagination.total}/${exact}`;
      const plan = ((await db.raw(`EXPLAIN ${sqlText}`, f.args as never[])).rows as { "QUERY PLAN": string }[])
        .map((r) => r["QUERY PLAN"])
        .join(" ");
      const idx =
        [...new Set([...plan.matchAll(/(?:using|on) (audit_log_\w+)/g)].map((m) => m[1]))].join("+") ||
        (plan.includes("Seq Scan") ? "seq scan" : "?");
      console.log(
        `${f.name.padEnd(27)} ${upperPercentile(api, 50).toFixed(1).padStart(6)} ms ${upperPercentile(api, 99).toFixed(1).padStart(6)} ms ${upperPercentile(sql, 50).toFixed(2).padStart(9)} ms ${upperPercentile(counts, 50).toFixed(1).padStart(12)} ms   ${total.padEnd(16)} ${idx}`,
      );
    }

    // Export: every row (range: all 300 days), the bound raised to fit.
    const rssBefore = rssBytes(pid) / 1024;
    const s = performance.now();
    const res = await fetch(
      `${url}/api/v1/audit-logs/export?from=${encodeURIComponent(new Date(now - 301 * DAY).toISOString())}&to=${encodeURIComponent(new Date(now + DAY).toISOString())}`,
      { headers: auth },
    );
    if (res.status !== 200) throw new Error(`export: ${res.status} ${await res.text()}`);
    let bytes = 0;
    let lines = 0;
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssBytes(pid) / 1024);
    }, 50);
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      for (const b of chunk) if (b === 10) lines++;
    }
    clearInterval(sampler);
    const exportS = (performance.now() - s) / 1000;
    const rows = lines - 1;
    // Baseline: the same keyset batches straight from Postgres, no CSV, no HTTP.
    const b0 = performance.now();
    let before: string | undefined;
    let read = 0;
    for (;;) {
      const q = db("audit_log").select("*").orderBy("seq", "desc").limit(2000);
      if (before) q.where("seq", "<", before);
      const batch = (await q) as { seq: string }[];
      read += batch.length;
      if (batch.length < 2000) break;
      before = String(batch[batch.length - 1]?.seq);
    }
    const baseS = (performance.now() - b0) / 1000;
    console.log(
      `\nCSV export of ${rows} rows (${(bytes / 1e6).toFixed(0)} MB): ${exportS.toFixed(1)} s, ${Math.round(rows / exportS)} rows/s; baseline (keyset reads, no CSV/HTTP) ${Math.round(read / baseS)} rows/s; ratio ${(rows / exportS / (read / baseS)).toFixed(2)}`,
    );
    console.log(
      `API process RSS: ${(rssBefore / 1024).toFixed(0)} MB before, peak ${(peak / 1024).toFixed(0)} MB while exporting (VmHWM since start ${(peakRssBytes(pid) / 1024 / 1024).toFixed(0)} MB): it streams, memory does not grow with the row count`,
    );
  } finally {
    await stopServer(child);
  }
} finally {
  await db.destroy();
  await bed.stop();
}
