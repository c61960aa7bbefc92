// Figures: monitoring and dashboards (docs/dev/monitoring.md).
//   1. GET /api/v1/dashboard p50/p99 over 1,000 sessions, 500 nodes and 4,000 cards (super_admin: every
//      tile; member: their own), through the whole route layer on real Postgres.
//   2. The metrics server with 4,000 cards at a 15 s interval: rounds of 500 node exporters' text (DCGM +
//      HAMi families) through the API's relay (stamping, then import), the relay's time per round, the
//      samples/s ingested back to back against the 15 s rate, and the server's resident memory.
//   3. A 7-day session panel (session.gpu_utilization, 15 s samples backfilled for 7 days): p50/p99 of
//      GET /api/v1/monitoring/panels/... as the session's owner, and the points it returns.
//
//   node bench/src/monitoring.ts [--n 200] [--rounds 20] [--only dashboard] [--explain]
//
// --explain prints each query of a super_admin's dashboard with its EXPLAIN ANALYZE execution time and plan
// head, to find the slow one; --only dashboard stops after figure 1.
//
// Baselines beside each figure: the budget a page can spend (dashboard and panel p99 ≤ 300 ms), the rate
// 4,000 cards at 15 s need, and VictoriaMetrics' own sizing guidance (about 1 GB of RAM per million active
// series).
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildDeps, connect, migrateLatest, startPostgres } from "@berth/api";
import { buildApp, createMetrics, fakeAuthenticator, testConfig } from "@berth/api/testing";
import { startMetricsServer } from "@berth/e2e/metrics-server";
import pino from "pino";
import { percentile } from "./kit/percentile.ts";

const { values } = parseArgs({
  options: {
    n: { type: "string", default: "200" },
    rounds: { type: "string", default: "20" },
    only: { type: "string" },
    explain: { type: "boolean", default: false },
  },
});
const N = Number(values.n);
const ROUNDS = Number(values.rounds);
const NODES = 500;
const CARDS_PER_NODE = 8;
const SESSIONS = 1000;
const CLUSTERS = ["clu_bencha", "clu_benchb"];

const ms = (x: number) => `${x.toFixed(1)} ms`;

const dir = mkdtempSync(join(tmpdir(), "berth-bench-monitoring-"));
const pg = await startPostgres({ dataDir: join(dir, "pg") });
const vm = await startMetricsServer({ dir: join(dir, "vm") });
const db = connect(pg.url, { poolMax: 20 });
let server: ReturnType<typeof createServer> | undefined;
try {
  await migrateLatest(db);
  // --- the inventory and ledger: 2 clusters, 500 nodes of 8 cards, 1,000 sessions over 10 organizations
  const now = Date.now();
  await db("clusters").insert(CLUSTERS.map((id) => ({ id, name: id.slice(4), session_domain: `${id}.test` })));
  const nodes = Array.from({ length: NODES }, (_, i) => ({
    cluster_id: CLUSTERS[i % 2] as string,
    name: `node-${i}`,
    gpu_model: i % 5 === 0 ? "NVIDIA-A100-SXM4-40GB" : "NVIDIA-H100-80GB-HBM3",
    gpu_count: CARDS_PER_NODE,
    gpu_allocatable: CARDS_PER_NODE,
    gpu_in_use: 2,
    schedulable: i % 50 !== 0,
    ready: i % 70 !== 0,
    labels: "{}",
    observed_at: new Date(),
  }));
  for (let i = 0; i < nodes.length; i += 250) await db("cluster_nodes").insert(nodes.slice(i, i + 250));
  const devices = nodes.flatMap((n, i) =>
    Array.from({ length: CARDS_PER_NODE }, (_, k) => ({
      cluster_id: n.cluster_id,
      node_name: n.name,
      index: k,
      model: n.gpu_model,
      uuid: `GPU-${i}-${k}`,
      memory_mib: 81_559,
    })),
  );
  for (let i = 0; i < devices.length; i += 1000) await db("gpu_devices").insert(devices.slice(i, i + 1000));
  const phases = ["Running", "Running", "Running", "Paused", "Queued", "Terminated"];
  const sessions = Array.from({ length: SESSIONS }, (_, i) => {
    const id = `ses_${String(i).padStart(20, "0")}`;
    const phase = phases[i % phases.length] as string;
    return {
      id,
      cr_name: id.replace("_", "-"),
      namespace: `org-${i % 10}`,
      owner_id: `usr_bench${i % 200}`,
      organization_id: `org_bench${i % 10}`,
      project_id: `prj_bench${i % 30}`,
      offering: "h100",
      preset: "gpu-small",
      image: "jupyterlab",
      gpu_model: "NVIDIA-H100-80GB-HBM3",
      gpu_count: 2,
      hourly_credit_rate: "2000000",
      cluster_id: phase === "Queued" ? null : (CLUSTERS[i % 2] as string),
      node: phase === "Queued" ? null : `node-${(i * 2) % NODES}`,
      phase,
      desired_state: "Running",
      queued_at: phase === "Queued" ? new Date(now - i * 1000) : null,
      created_at: new Date(now - i * 60_000),
    };
  });
  for (let i = 0; i < sessions.length; i += 250) await db("sessions").insert(sessions.slice(i, i + 250));
  // A day of 1-minute usage samples for every running session, and a charge per ten samples.
  const running = sessions.filter((s) => s.phase === "Running");
  for (const s of running) {
    const samples = Array.from({ length: 60 }, (_, k) => ({
      cluster_id: s.cluster_id,
      sample_id: `${s.id}-${k}`,
      session: s.id,
      period_start: new Date(now - (k + 1) * 60_000),
      period_end: new Date(now - k * 60_000),
      gpu_seconds: 120,
      gpu_utilization: k % 3 === 0 ? 2 : 70,
    }));
    await db("usage_samples").insert(samples);
    await db("ledger_transactions").insert(
      Array.from({ length: 6 }, (_, k) => ({
        id: `txn_${s.id.slice(4)}${k}`,
        kind: "charge",
        amount: 400_000,
        organization_id: s.organization_id,
        session_id: s.id,
        cluster_id: s.cluster_id,
        sample_id: `${s.id}-${k * 10}`,
        actor_kind: "operator",
        created_at: new Date(now - k * 600_000),
      })),
    );
  }

  // What autovacuum would have done by now on a live database: without statistics the planner takes the
  // bulk-loaded tables for empty and picks nested loops.
  await db.raw("analyze");

  const member = {
    userId: "usr_bench0",
    email: "m@b",
    isSuperAdmin: false,
    mustChangePassword: false,
    memberships: [{ organizationId: "org_bench0", role: "member" }],
  };
  const admin = { userId: "usr_root", email: "r@b", isSuperAdmin: true, mustChangePassword: false, memberships: [] };
  const tokens: Parameters<typeof fakeAuthenticator>[0] = { member, admin };
  const config = testConfig({ DATABASE_URL: pg.url, BERTH_METRICS_SERVER_URL: vm.url });
  const deps = buildDeps(config, {
    db,
    log: pino({ level: "silent" }),
    metrics: createMetrics({ defaultMetrics: false }),
    authenticate: fakeAuthenticator(tokens),
  });
  server = createServer(buildApp(deps).callback());
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const get = async (path: string, token: string) => {
    const t0 = performance.now();
    const res = await fetch(base + path, { headers: { authorization: `Bearer ${token}` } });
    const body = await res.json();
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
    return { ms: performance.now() - t0, body };
  };

  console.log(
    `machine: ${cpus().length} cores, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  console.log(`\n1. GET /api/v1/dashboard, ${SESSIONS} sessions, ${NODES} nodes, ${devices.length} cards, n=${N} each`);
  for (const [who, token] of [
    ["super_admin", "admin"],
    ["member", "member"],
  ] as const) {
    for (let i = 0; i < 10; i++) await get("/api/v1/dashboard", token);
    const lat: number[] = [];
    for (let i = 0; i < N; i++) lat.push((await get("/api/v1/dashboard", token)).ms);
    console.log(
      `   ${who.padEnd(12)} p50 ${ms(percentile(lat, 50))}  p99 ${ms(percentile(lat, 99))}   (budget p99 ≤ 300 ms)`,
    );
  }
  if (values.explain) await explainDashboard(() => get("/api/v1/dashboard", "admin"));
  // biome-ignore lint/suspicious/noConfusingLabels: the figures after the dashboard are skipped with --only dashboard
  relayAndPanel: {
    if (values.only === "dashboard") break relayAndPanel;

    // --- 2. 4,000 cards at 15 s through the relay
    const pods = new Map<number, string>();
    for (const [i, s] of running.entries()) pods.set(i * 2, s.cr_name);
    const exposition = (round: number, nodeFrom: number, nodeTo: number): string => {
      const out: string[] = [];
      for (let n = nodeFrom; n < nodeTo; n++)
        for (let k = 0; k < CARDS_PER_NODE; k++) {
          const card = n * CARDS_PER_NODE + k;
          const pod = pods.get(card);
          const l = `gpu="${k}",UUID="GPU-${n}-${k}",device="nvidia${k}",modelName="NVIDIA H100 80GB HBM3",Hostname="node-${n}"${pod ? `,namespace="berth-sessions",pod="${pod}",container="lab"` : ""}`;
          const u = (card * 7 + round * 13) % 100;
          out.push(
            `DCGM_FI_DEV_GPU_UTIL{${l}} ${u}`,
            `DCGM_FI_DEV_FB_USED{${l}} ${u * 800}`,
            `DCGM_FI_DEV_FB_FREE{${l}} ${81_559 - u * 800}`,
            `DCGM_FI_DEV_POWER_USAGE{${l}} ${80 + u * 3}`,
            `DCGM_FI_DEV_GPU_TEMP{${l}} ${35 + (u >> 2)}`,
            `DCGM_FI_DEV_XID_ERRORS{${l}} 0`,
          );
          if (pod)
            out.push(
              `Device_utilization_desc_of_container{podnamespace="berth-sessions",podname="${pod}",ctrname="lab",vdeviceid="${k}",deviceuuid="GPU-${n}-${k}"} ${u}`,
              `vGPU_device_memory_usage_in_bytes{podnamespace="berth-sessions",podname="${pod}",ctrname="lab",vdeviceid="${k}",deviceuuid="GPU-${n}-${k}"} ${u * 800 * 1048576}`,
            );
        }
      return `${out.join("\n")}\n`;
    };
    const roundMs: number[] = [];
    let samples = 0;
    const t0 = performance.now();
    for (let r = 0; r < ROUNDS; r++) {
      const start = performance.now();
      // Each cluster's operator forwards its own nodes (one exporter text per node; here per cluster).
      const answers = await Promise.all(
        CLUSTERS.map((c, ci) =>
          deps.monitoring.forward(c, [
            { job: "gpu-exporter", text: exposition(r, (ci * NODES) / 2, ((ci + 1) * NODES) / 2) },
          ]),
        ),
      );
      samples += answers.reduce((a, x) => a + x.samples, 0);
      roundMs.push(performance.now() - start);
    }
    const seconds = (performance.now() - t0) / 1000;
    await vm.flush();
    const perRound = samples / ROUNDS;
    console.log(`\n2. metrics server, ${devices.length} cards, ${ROUNDS} rounds back to back through the API's relay`);
    console.log(
      `   samples per round ${perRound.toFixed(0)}; at 15 s that is ${(perRound / 15).toFixed(0)} samples/s needed`,
    );
    console.log(
      `   ingested ${(samples / seconds).toFixed(0)} samples/s (${(samples / seconds / (perRound / 15)).toFixed(1)}× the need)`,
    );
    console.log(
      `   relay per round p50 ${ms(percentile(roundMs, 50))}  p99 ${ms(percentile(roundMs, 99))}   (budget: one round in 15 s)`,
    );
    console.log(
      `   victoria-metrics resident ${(vm.rssBytes() / 1048576).toFixed(0)} MiB with ${(perRound).toFixed(0)} active series (guidance ~1 GiB per million)`,
    );

    // --- 3. a 7-day session panel: the owner's session, 15 s samples for 7 days
    const s = running[0] as (typeof running)[number];
    const owner = {
      userId: s.owner_id,
      email: "o@b",
      isSuperAdmin: false,
      mustChangePassword: false,
      memberships: [{ organizationId: s.organization_id, role: "member" }],
    };
    const labels = `UUID="GPU-backfill",Hostname="node-0",pod="${s.cr_name}",namespace="berth-sessions",job="gpu-exporter",berth_session="${s.id}",berth_owner="${s.owner_id}",berth_org="${s.organization_id}",berth_project="${s.project_id}",berth_cluster="${s.cluster_id}"`;
    const week = 7 * 86_400;
    const lines: string[] = [];
    for (let t = Math.floor(now / 1000) - week; t < Math.floor(now / 1000); t += 15)
      lines.push(`DCGM_FI_DEV_GPU_UTIL{${labels}} ${(t / 15) % 100} ${t * 1000}`);
    for (let i = 0; i < lines.length; i += 10_000) {
      const res = await fetch(`${vm.url}/api/v1/import/prometheus`, {
        method: "POST",
        body: `${lines.slice(i, i + 10_000).join("\n")}\n`,
      });
      if (!res.ok) throw new Error(`backfill: ${res.status}`);
    }
    await vm.seen(`DCGM_FI_DEV_GPU_UTIL{UUID="GPU-backfill"}`, now - 60_000);
    tokens.owner = owner;
    const path = `/api/v1/monitoring/panels/session.gpu_utilization?session=${s.id}&range=7d`;
    const lat: number[] = [];
    let points = 0;
    for (let i = 0; i < N; i++) {
      // A new second each time would be the realistic miss; the cache answers repeats within 10 s.
      const r = await get(path, "owner");
      lat.push(r.ms);
      points = r.body.timestamps.length;
    }
    const cold: number[] = [];
    for (let i = 0; i < Math.min(20, N); i++) {
      await new Promise((r) => setTimeout(r, 1001));
      cold.push((await get(path, "owner")).ms);
    }
    console.log(`\n3. a 7-day session panel, ${lines.length} samples backfilled (15 s), n=${N}`);
    console.log(`   cached  p50 ${ms(percentile(lat, 50))}  p99 ${ms(percentile(lat, 99))}`);
    console.log(
      `   uncached (a new second each) p50 ${ms(percentile(cold, 50))}  p99 ${ms(percentile(cold, 99))}   (budget p99 ≤ 300 ms)`,
    );
    console.log(`   points returned ${points} per series (max_points 1000; 7 days at 15 s would be ${lines.length})`);
  }
} finally {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  await db.destroy();
  await vm.stop();
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}

/** Each query one dashboard call runs, with Postgres' own execution time and the head of its plan. */
async function explainDashboard(call: () => Promise<unknown>): Promise<void> {
  const seen: { sql: string; bindings: unknown[] }[] = [];
  const record = (q: { sql: string; bindings?: unknown[] }) => seen.push({ sql: q.sql, bindings: q.bindings ?? [] });
  db.on("query", record);
  await call();
  db.off("query", record);
  console.log(`\n   EXPLAIN ANALYZE of the super_admin dashboard's ${seen.length} queries, slowest first`);
  const out: { ms: number; sql: string; plan: string[] }[] = [];
  for (const q of seen) {
    if (!/^\s*(with|select)/i.test(q.sql)) continue;
    const r = await db.raw(`explain (analyze, buffers) ${q.sql.replace(/\$\d+/g, "?")}`, q.bindings as never);
    const plan = (r.rows as { "QUERY PLAN": string }[]).map((x) => x["QUERY PLAN"]);
    const exec = Number(/Execution Time: ([\d.]+)/.exec(plan.join("\n"))?.[1] ?? Number.NaN);
    out.push({ ms: exec, sql: q.sql, plan });
  }
  for (const o of out.sort((a, b) => b.ms - a.ms)) {
    console.log(`   ${ms(o.ms)}  ${o.sql.slice(0, 160)}`);
    for (const l of o.plan.slice(0, 14)) console.log(`        ${l}`);
  }
}
