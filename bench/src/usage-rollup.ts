// Figure: the month's GPU-seconds, from the daily roll-up (usage_daily, migration 20261126002100) against
// the raw sum over every usage sample of the month it replaced, on the same data in the same run,
// alternating. Three queries the dashboard and the usage report make:
//   a. a super_admin's month by organization and project (spendByProject, from the month's start, open)
//   b. a member's own month (gpuSeconds)
//   c. the usage report's closed month (spendByProject over [1 Nov, 1 Dec))
// and what the roll-up costs where samples come in: batches of 1,000 samples (one per running session, as
// an operator's minute) through insertUsageSamples with the roll-up's trigger on and off.
//
//   node bench/src/usage-rollup.ts [--sessions 400] [--days 25] [--duty 0.25] [--n 40] [--batches 60]
//
// Data: `sessions` sessions over 10 organizations and 30 projects, 1-minute samples, each session running
// a `duty` share of each day, for the month's first `days` days (400 × 25 × 1,440 × 0.25 = 3.6 M samples).
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { connect, migrateLatest, startPostgres } from "@berth/api";
import {
  gpuSeconds,
  insertUsageSamples,
  rawUsageSecondsSource,
  spendByProject,
  usageSecondsSource,
} from "@berth/api/testing";
import { percentile } from "./kit/percentile.ts";

const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "400" },
    days: { type: "string", default: "25" },
    duty: { type: "string", default: "0.25" },
    n: { type: "string", default: "40" },
    batches: { type: "string", default: "60" },
  },
});
const SESSIONS = Number(values.sessions);
const DAYS = Number(values.days);
const DUTY = Number(values.duty);
const N = Number(values.n);
const BATCHES = Number(values.batches);
const MONTH = new Date(Date.UTC(2026, 10, 1));
const NEXT_MONTH = new Date(Date.UTC(2026, 11, 1));

const ms = (x: number) => `${x.toFixed(1).padStart(7)} ms`;

const dir = mkdtempSync(join(tmpdir(), "berth-bench-rollup-"));
const pg = await startPostgres({ dataDir: join(dir, "pg") });
const db = connect(pg.url, { poolMax: 4 });
try {
  await migrateLatest(db);
  await db.raw(
    `INSERT INTO sessions (id, cr_name, namespace, owner_id, organization_id, project_id, offering, preset, image,
       gpu_model, gpu_count, hourly_credit_rate, cluster_id, phase, desired_state)
     SELECT 'ses_' || lpad(g::text, 20, '0'), 'ses-' || lpad(g::text, 20, '0'), 'org-' || (g % 10),
       'usr_bench' || (g % 200), 'org_bench' || (g % 10), 'prj_bench' || (g % 30), 'h100', 'gpu-small',
       'jupyterlab', 'H100', 2, '2000000', 'clu_bench', 'Running', 'Running'
       FROM generate_series(0, ?::int - 1) g`,
    [SESSIONS],
  );
  // Day by day, as the samples would have arrived: each session runs a block of the day (its own offset).
  const t0 = performance.now();
  const perDay = Math.round(1440 * DUTY);
  for (let d = 0; d < DAYS; d++) {
    await db.raw(
      `INSERT INTO usage_samples (cluster_id, sample_id, session, period_start, period_end, gpu_seconds, gpu_utilization)
       SELECT 'clu_bench', 'smp-' || s || '-' || ?::int || '-' || m, 'ses_' || lpad(s::text, 20, '0'),
              ?::timestamptz + make_interval(mins => ((s * 37) % (1440 - ?::int)) + m),
              ?::timestamptz + make_interval(mins => ((s * 37) % (1440 - ?::int)) + m + 1),
              120 + (m % 7) * 0.125, 50
         FROM generate_series(0, ?::int - 1) s, generate_series(0, ?::int - 1) m`,
      [
        d,
        new Date(MONTH.getTime() + d * 86_400_000),
        perDay,
        new Date(MONTH.getTime() + d * 86_400_000),
        perDay,
        SESSIONS,
        perDay,
      ],
    );
  }
  const loadS = (performance.now() - t0) / 1000;
  await db.raw("analyze");
  const counts = (await db.raw(
    "SELECT (SELECT count(*) FROM usage_samples)::int AS samples, (SELECT count(*) FROM usage_daily)::int AS days",
  )) as { rows: { samples: number; days: number }[] };
  const { samples, days } = counts.rows[0] as { samples: number; days: number };
  console.log(
    `machine: ${cpus().length} cores, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  console.log(
    `data: ${SESSIONS} sessions, ${DAYS} days of 1-minute samples at ${DUTY} duty: ${samples.toLocaleString("en")} samples, ${days.toLocaleString("en")} roll-up rows (loaded with the trigger in ${loadS.toFixed(1)} s)`,
  );

  const member = { ownerId: "usr_bench0", ownerOrganizationIds: ["org_bench0"] };
  const queries: [string, (raw: boolean) => Promise<unknown>][] = [
    [
      "a. super_admin month by org/project",
      (raw) => spendByProject(db, { all: true }, MONTH, undefined, raw ? rawUsageSecondsSource : usageSecondsSource),
    ],
    [
      "b. member's month (gpuSeconds)",
      (raw) => gpuSeconds(db, member, MONTH, raw ? rawUsageSecondsSource : usageSecondsSource),
    ],
    [
      "c. usage report, closed month",
      (raw) => spendByProject(db, { all: true }, MONTH, NEXT_MONTH, raw ? rawUsageSecondsSource : usageSecondsSource),
    ],
  ];
  console.log(`\nthe month's figures, n=${N} each, raw and roll-up alternating on the same data`);
  console.log(
    `   ${"query".padEnd(38)} ${"raw p50".padStart(10)} ${"raw p99".padStart(10)} ${"roll-up p50".padStart(12)} ${"roll-up p99".padStart(12)}  same answer`,
  );
  for (const [name, run] of queries) {
    // The answers first: the bench measures nothing that differs.
    const same = JSON.stringify(await run(true)) === JSON.stringify(await run(false));
    for (let i = 0; i < 3; i++) {
      await run(true);
      await run(false);
    }
    const raw: number[] = [];
    const rolled: number[] = [];
    for (let i = 0; i < N; i++) {
      for (const [list, r] of (i % 2
        ? [
            [raw, true],
            [rolled, false],
          ]
        : [
            [rolled, false],
            [raw, true],
          ]) as [number[], boolean][]) {
        const s = performance.now();
        await run(r);
        list.push(performance.now() - s);
      }
    }
    console.log(
      `   ${name.padEnd(38)} ${ms(percentile(raw, 50))} ${ms(percentile(raw, 99))} ${ms(percentile(rolled, 50)).padStart(12)} ${ms(percentile(rolled, 99)).padStart(12)}  ${same ? "yes" : "NO"}`,
    );
  }

  // --- ingest: one operator minute (a sample per session) per batch, the roll-up's trigger on and off
  console.log(`\ningest: ${BATCHES} batches of ${SESSIONS} samples each way through insertUsageSamples, alternating`);
  const on: number[] = [];
  const off: number[] = [];
  const base = NEXT_MONTH.getTime() - 86_400_000;
  for (let b = 0; b < BATCHES * 2; b++) {
    const withTrigger = b % 2 === 0;
    const batch = Array.from({ length: SESSIONS }, (_, s) => ({
      id: `ingest-${b}-${s}`,
      session: `ses_${String(s).padStart(20, "0")}`,
      start: new Date(base + b * 60_000),
      end: new Date(base + (b + 1) * 60_000),
      gpu_seconds: 120,
      gpu_utilization: 50,
    }));
    if (!withTrigger) await db.raw("ALTER TABLE usage_samples DISABLE TRIGGER usage_daily_on_insert");
    const s = performance.now();
    await insertUsageSamples(db, "clu_bench", batch);
    (withTrigger ? on : off).push(performance.now() - s);
    if (!withTrigger) await db.raw("ALTER TABLE usage_samples ENABLE TRIGGER usage_daily_on_insert");
  }
  console.log(`   without the roll-up  p50 ${ms(percentile(off, 50))}  p99 ${ms(percentile(off, 99))}  (the baseline)`);
  console.log(`   with the roll-up     p50 ${ms(percentile(on, 50))}  p99 ${ms(percentile(on, 99))}`);
} finally {
  await db.destroy();
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
