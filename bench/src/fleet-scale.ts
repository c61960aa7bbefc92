// biome-ignore-all lint/suspicious/noExplicitAny: the bench reads Kubernetes JSON and stream events as they come
// How Berth's cost grows with the fleet (issue #37): steps of fleet size on the real path (a management
// cluster and GPU clusters of kwok nodes × 8 H100, Postgres; the API, a worker leader and a standby, and one
// operator per GPU cluster as processes, split-processes.ts), and at each step, for each process, resident
// memory and CPU share, per-unit costs, latencies and writes. docs/dev/fleet-scale.md has the curves.
//
//   node bench/src/fleet-scale.ts [--scale=0.05] [--steps=3] [--clusters=3] [--gpus=8] [--organizations=100]
//                                 [--window=60] [--reads=60] [--paced=20] [--concurrency=16] [--out=<dir>]
//
// --scale shrinks the issue's steps (100 → 500 → 2,000 nodes per cluster, 1,000 → 5,000 → 20,000 sessions,
// 1,000 → 10,000 users) for a machine that cannot hold them (fleet-scale-report.ts, planSteps); the output
// says which steps ran. At each step, after the sessions are Running:
//   - a quiet window (10 s) and a window of --window s in which 10 % of the running sessions per minute are
//     paused or resumed (a state change each); the operators' usage samples at their real interval (60 s);
//   - RSS and CPU share per process over the busy window; CPU-ms per state change (API, worker leader and
//     operators, their quiet use taken off); bytes of worker-leader RSS per session and of operator RSS per
//     node above what each used on the empty fleet;
//   - the placement pass p50/p99 (the worker's own berth_worker_placement_pass_seconds);
//   - create → Running p50/p99 of --paced sessions created at 2/s, seen on the event stream;
//   - GET /sessions (a member's page; an administrator's of the whole fleet), the dashboard and the queue,
//     p50/p99 over --reads sequential requests each;
//   - management-cluster writes per minute, quiet and busy;
//   - Postgres bytes per session-day (the busy window's growth, extrapolated) and per 1,000 usage samples.
// After the last step, the worker leader is stopped (SIGTERM: a rolling restart); the standby's time until
// it has listed everything and placed a new session, and its peak RSS.
// Not measured here: gateways (none run in this bed) and SSE fan-out (bench/src/event-streams.ts).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { grantToOrganization } from "@berth/api/testing";
import type { OperationId } from "@berth/console/client";
import { DEFAULT_CONTROLLER_OPTIONS, DEFAULT_TIMING } from "@berth/controllers";
import { ResourcePolicyKind, resourcePath } from "@berth/crds";
import { gpuNodeManifest, type KubeHttp, peakRssBytes, rssBytes } from "@berth/e2e";
import {
  adminKube,
  gpuCluster,
  H100,
  MANAGEMENT,
  openEventStream,
  type SessionsBed,
  startSessionsBed,
} from "@berth/e2e/sessions";
import { type Answer, answering, causeOf, retrying } from "./api.ts";
import { chartSvg, growth, type Measure, planSteps, type Step, table, writeCharts } from "./fleet-scale-report.ts";
import { percentile } from "./kit/percentile.ts";
import { writesServed } from "./kube-requests.ts";
import { pool } from "./pool.ts";
import { cpuSnapshot, cpuUsed } from "./process-cpu.ts";
import { type Child, startSplit } from "./split-processes.ts";

const { values } = parseArgs({
  options: {
    scale: { type: "string", default: "0.05" },
    steps: { type: "string", default: "3" },
    clusters: { type: "string", default: "3" },
    gpus: { type: "string", default: "8" },
    organizations: { type: "string", default: "100" },
    window: { type: "string", default: "60" },
    reads: { type: "string", default: "60" },
    paced: { type: "string", default: "20" },
    concurrency: { type: "string", default: "16" },
    out: { type: "string", default: "fleet-scale-out" },
  },
});
const SCALE = Number(values.scale);
const WINDOW_S = Number(values.window);
const READS = Number(values.reads);
const PACED = Number(values.paced);
const CONC = Number(values.concurrency);
const OUT = values.out as string;
const steps = planSteps(SCALE, {
  clusters: Number(values.clusters),
  gpusPerNode: Number(values.gpus),
  organizations: Number(values.organizations),
  steps: Number(values.steps),
});

const log = (line: string) => process.stdout.write(`${line}\n`);
const s2 = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The leader's placement pass quantiles from its status listener, in ms. */
async function placementPass(statusUrl: string): Promise<{ p50: number; p99: number }> {
  const text = await (await fetch(`${statusUrl}/metrics`)).text();
  const q = (x: string) =>
    Number(
      new RegExp(`berth_worker_placement_pass_seconds\\{[^}]*quantile="${x}"[^}]*\\} ([0-9.e+-]+)`).exec(text)?.[1],
    ) * 1000;
  return { p50: q("0.5"), p99: q("0.99") };
}

interface StepFigures {
  step: Step;
  rssMb: Map<string, number>;
  cpuShare: Map<string, number>;
  bytesPerSession: number;
  bytesPerNode: number;
  cpuMsPerChange: number;
  changes: number;
  pass: { p50: number; p99: number };
  createToRunning: { p50: number; p99: number };
  reads: Map<string, { p50: number; p99: number }>;
  writesPerMin: { quiet: number; busy: number };
  pgPerSessionDay: number;
  pgPer1000Samples: number;
  pgTotalPerSession: number;
}

async function main(): Promise<void> {
  const names = Array.from({ length: Number(values.clusters) }, (_, i) => `gpu-${String.fromCharCode(97 + i)}`);
  const GPUS = Number(values.gpus);
  log(
    `# fleet-scale at scale ${SCALE} of the issue's steps (${steps.map((s) => `${s.nodesPerCluster} nodes × ${s.clusters} clusters, ${s.sessions} sessions, ${s.users} users`).join(" → ")}); ${s2(WINDOW_S * 1000)} windows`,
  );
  const bed: SessionsBed = await startSessionsBed({
    fleet: {
      clusters: [MANAGEMENT, ...names.map((n) => gpuCluster(n, [{ name: `${n}-0`, gpuModel: H100, gpuCount: GPUS }]))],
    },
    operatorResyncMs: 60_000,
    operatorDebounceMs: 500,
    worker: {
      timing: DEFAULT_TIMING,
      pollMs: DEFAULT_CONTROLLER_OPTIONS.pollMs,
      resyncMs: DEFAULT_CONTROLLER_OPTIONS.resyncMs,
    },
    workerLease: { durationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
  });
  const mk = adminKube(bed.fleet.cluster("mgmt"));
  const gks = names.map((n) => adminKube(bed.fleet.cluster(n)));
  let stopping = false;
  const stopAll = async () => {
    if (stopping) return;
    stopping = true;
    mk.close();
    for (const k of gks) k.close();
    await bed.stop();
  };
  try {
    const split = await startSplit(bed, {
      gpuCluster: names[0] as string,
      moreGpuClusters: names.slice(1),
      onSignal: stopAll,
    });
    const leader = split.worker as Child;
    const leaderStatus = String((await leader.line("worker started", 10_000)).status);
    const standby = await split.startWorker("worker-standby");
    const db = bed.t.database.db;
    const call = answering(() => split.apiUrl);
    // Keyed, so that a create a loaded machine answered 503 (or not at all) is sent again, not made twice.
    const create = retrying(call, {
      attempts: 5,
      backoffMs: (n) => 1000 * n,
      again: (_op, a, options) => !!options?.idempotencyKey && (!a || a.status === 503),
    });
    await split.reissueTokens([bed.superAdmin]);
    const admin = bed.superAdmin.token;
    const asAdmin = { token: admin };
    await mk.json(
      "PATCH",
      resourcePath(ResourcePolicyKind, { name: "global" }),
      { spec: { limits: { maxGpusPerUser: 100_000, maxConcurrentSessionsPerUser: 100_000 } } },
      "application/merge-patch+json",
    );
    const orgs = await Promise.all(
      Array.from({ length: steps[0]?.organizations ?? 100 }, () => bed.t.anOrganization()),
    );
    // Starting a session needs credits for a minimum run (billing), as the bed gives its own organization.
    for (const o of orgs)
      await grantToOrganization(db, {
        organizationId: o.id,
        amount: 1_000_000_000n,
        actorKind: "system",
        actorId: null,
        reason: "fleet-scale bench",
        at: new Date(),
      });
    const users: { id: string; token: string; org: number }[] = [];
    const processes = (): [string, number][] => [
      ["api", split.api.pid],
      ["worker leader", leader.pid],
      ["worker standby", standby.pid],
      ...split.operators.map((o, i) => [`operator ${names[i]}`, o.pid] as [string, number]),
    ];
    const base = new Map(processes().map(([n, pid]) => [n, rssBytes(pid)]));
    const figures: StepFigures[] = [];
    const sessionIds: string[] = [];
    let nodesPerCluster = 1;

    for (const step of steps) {
      const t0 = performance.now();
      // Nodes, users (each a member of one organization) and sessions up to the step's figures.
      await pool(
        names.flatMap((n, c) =>
          Array.from(
            { length: step.nodesPerCluster - nodesPerCluster },
            (_, i) => [c, `${n}-${nodesPerCluster + i}`] as const,
          ),
        ),
        16,
        async ([c, name]) => {
          await (gks[c] as KubeHttp).ensure("/api/v1/nodes", gpuNodeManifest({ name, gpuModel: H100, gpuCount: GPUS }));
        },
      );
      nodesPerCluster = step.nodesPerCluster;
      const made = await Promise.all(Array.from({ length: step.users - users.length }, () => bed.t.aUser()));
      await pool(made, 8, async (u, i) => {
        const org = (users.length + i) % orgs.length;
        await bed.t.member(u, (orgs[org] as { id: string }).id, null, "member");
      });
      const fresh = made.map((u, i) => ({ id: u.id, token: u.token, org: (users.length + i) % orgs.length }));
      await split.reissueTokens(fresh);
      users.push(...fresh);
      const wantGpus = step.nodesPerCluster * step.clusters * GPUS;
      for (const deadline = Date.now() + 600_000; ; ) {
        const a = await call(asAdmin, "getGpuAvailability");
        const m = a.ok ? a.body.models.find((x) => x.gpu_model === H100) : undefined;
        if (m && m.free + sessionIds.length >= wantGpus) break;
        if (Date.now() > deadline) throw new Error(`the inventory never showed ${wantGpus} GPUs: ${JSON.stringify(a)}`);
        await sleep(1000);
      }
      await sleep(6_000); // the API's catalog cache (5 s)
      const need = step.sessions - sessionIds.length;
      const refused = new Map<string, number>();
      await pool(
        Array.from({ length: need }, (_, i) => i),
        CONC,
        async (i) => {
          const u = users[(sessionIds.length + i) % users.length] as (typeof users)[number];
          const r = await create(
            u,
            "createSession",
            { body: { offering: "h100", preset: "gpu-small", image: "jupyterlab" } },
            { idempotencyKey: `fleet-${step.index}-${i}` },
          );
          if (r.ok && r.status === 201) sessionIds.push(r.body.id);
          else refused.set(causeOf(r), (refused.get(causeOf(r)) ?? 0) + 1);
        },
      );
      if (refused.size > 0) log(`  creates refused: ${[...refused].map(([k, v]) => `${v}×${k}`).join(", ")}`);
      // Until every session made is Running or has failed (a loaded machine fails some: said, not waited on).
      const phases = async () =>
        new Map(
          (
            (await db("sessions").whereIn("id", sessionIds).groupBy("phase").select("phase").count({ n: "*" })) as {
              phase: string;
              n: string;
            }[]
          ).map((r) => [r.phase, Number(r.n)]),
        );
      for (const deadline = Date.now() + 1_800_000; ; ) {
        const by = await phases();
        const settled = (by.get("Running") ?? 0) + (by.get("Failed") ?? 0);
        if (settled >= sessionIds.length) {
          const failed = sessionIds.length - (by.get("Running") ?? 0);
          if (failed > 0) {
            log(`  ${failed} of ${sessionIds.length} sessions failed; left out of the figures`);
            const ok = new Set(
              (
                (await db("sessions").whereIn("id", sessionIds).where({ phase: "Running" }).select("id")) as {
                  id: string;
                }[]
              ).map((r) => r.id),
            );
            sessionIds.splice(0, sessionIds.length, ...sessionIds.filter((id) => ok.has(id)));
          }
          break;
        }
        if (Date.now() > deadline)
          throw new Error(`after 30 min: ${JSON.stringify(Object.fromEntries(by))} of ${sessionIds.length}`);
        await sleep(2000);
      }
      log(
        `step ${step.index}: ${step.nodesPerCluster} nodes × ${step.clusters}, ${sessionIds.length} sessions Running, ${users.length} users; ready in ${s2(performance.now() - t0)}`,
      );

      // Quiet window: what the processes use with nothing asked of them.
      const cpuOf = () => cpuSnapshot((pid) => processes().find(([, p]) => p === pid)?.[0]);
      const q0 = cpuOf();
      const qw0 = await writesServed(mk);
      await sleep(10_000);
      const quietCpu = cpuUsed(q0, cpuOf());
      const quietWrites = ((await writesServed(mk)) - qw0) * 6;

      // Busy window: 10 % of the running sessions per minute paused or resumed, spread evenly.
      const tables = async () =>
        new Map(
          (
            (await db.raw(
              "select relname, pg_total_relation_size(relid) as bytes, n_live_tup as rows from pg_stat_user_tables",
            )) as { rows: { relname: string; bytes: string; rows: string }[] }
          ).rows.map((r) => [r.relname, { bytes: Number(r.bytes), rows: Number(r.rows) }]),
        );
      const samples = async () => Number(((await db("usage_samples").count({ n: "*" })) as { n: string }[])[0]?.n ?? 0);
      const pg0 = await tables();
      const samples0 = await samples();
      const b0 = cpuOf();
      const bw0 = await writesServed(mk);
      const changesWanted = Math.max(1, Math.round((sessionIds.length * 0.1 * WINDOW_S) / 60));
      const paused: string[] = [];
      let changes = 0;
      const owner = new Map<string, string>();
      const tw0 = performance.now();
      await Promise.all(
        Array.from({ length: changesWanted }, async (_, i) => {
          await sleep((i * WINDOW_S * 1000) / changesWanted);
          const resume = i % 2 === 1 && paused.length > 0;
          const id = resume ? (paused.shift() as string) : (sessionIds[(i * 7919) % sessionIds.length] as string);
          const token = owner.get(id) ?? admin;
          const who = { token };
          const sessionId = id;
          const r = resume
            ? await call(who, "resumeSession", { params: { sessionId } })
            : await call(who, "pauseSession", { params: { sessionId } });
          if (r.status < 300) {
            changes++;
            if (!resume) paused.push(id);
          }
        }),
      );
      const busyMs = performance.now() - tw0;
      const busyCpu = cpuUsed(b0, cpuOf());
      const busyWrites = (((await writesServed(mk)) - bw0) * 60_000) / busyMs;
      // Resume what is still paused, so that the next step starts with every session Running.
      for (const sessionId of paused) await call(asAdmin, "resumeSession", { params: { sessionId } });
      const pg1 = await tables();
      const samples1 = await samples();
      const ours = ["api", "worker leader", ...names.map((n) => `operator ${n}`)];
      const extra = ours.reduce((a, n) => a + (busyCpu.get(n) ?? 0) - ((quietCpu.get(n) ?? 0) * busyMs) / 10_000, 0);
      const rssMb = new Map(processes().map(([n, pid]) => [n, rssBytes(pid) / 2 ** 20]));
      const cpuShare = new Map([...busyCpu].map(([n, s]) => [n, (s * 100_000) / busyMs]));
      const grew = [...pg1].reduce((a, [k, v]) => a + v.bytes - (pg0.get(k)?.bytes ?? 0), 0);
      const totalPg = [...pg1.values()].reduce((a, v) => a + v.bytes, 0);
      const usage = pg1.get("usage_samples");
      const sampleRows = Math.max(samples1, 1);
      log(`  ${changes} state changes in ${s2(busyMs)}; usage samples ${samples0} → ${samples1}`);

      // Placement pass, create → Running at 2/s, the reads.
      const pass = await placementPass(leaderStatus);
      const stream = await openEventStream(`${split.apiUrl}/api/v1/sessions/events`, admin);
      const lat: number[] = [];
      const pacedIds: string[] = [];
      await Promise.all(
        Array.from({ length: PACED }, async (_, i) => {
          await sleep(i * 500);
          const u = users[i % users.length] as (typeof users)[number];
          const start = performance.now();
          const r = await call(u, "createSession", {
            body: { offering: "h100", preset: "gpu-small", image: "jupyterlab" },
          });
          if (!r.ok || r.status !== 201) return;
          pacedIds.push(r.body.id);
          await stream.waitFor(
            (e: any) => e.data?.session_id === r.body.id && e.data.session?.phase === "Running",
            `${r.body.id} Running`,
            300_000,
          );
          lat.push(performance.now() - start);
        }),
      );
      await stream.close();
      for (let i = 0; i < pacedIds.length; i += 100)
        await call(asAdmin, "bulkTerminateSessions", { body: { ids: pacedIds.slice(i, i + 100) } });
      const member = users[0] as (typeof users)[number];
      const reads = new Map<string, { p50: number; p99: number }>();
      for (const [name, read] of [
        ["GET /sessions (member)", () => call(member, "listSessions")],
        ["GET /sessions?scope=all (super admin)", () => call(asAdmin, "listSessions", { query: { scope: "all" } })],
        ["GET /dashboard (super admin)", () => call(asAdmin, "getDashboard")],
        ["GET /queue (member)", () => call(member, "listQueue")],
      ] as const) {
        const ms: number[] = [];
        for (let i = 0; i < READS; i++) {
          const t = performance.now();
          const r: Answer<OperationId> = await read();
          if (r.status !== 200) throw new Error(`${name} answered ${r.status}: ${JSON.stringify(r).slice(0, 300)}`);
          ms.push(performance.now() - t);
        }
        reads.set(name, { p50: percentile(ms, 50), p99: percentile(ms, 99) });
      }
      const sessions = sessionIds.length;
      figures.push({
        step,
        rssMb,
        cpuShare,
        bytesPerSession: ((rssMb.get("worker leader") ?? 0) * 2 ** 20 - (base.get("worker leader") ?? 0)) / sessions,
        bytesPerNode:
          names.reduce(
            (a, n) => a + (rssMb.get(`operator ${n}`) ?? 0) * 2 ** 20 - (base.get(`operator ${n}`) ?? 0),
            0,
          ) /
          (step.nodesPerCluster * step.clusters),
        cpuMsPerChange: (extra * 1000) / Math.max(1, changes),
        changes,
        pass,
        createToRunning: { p50: percentile(lat, 50), p99: percentile(lat, 99) },
        reads,
        writesPerMin: { quiet: quietWrites, busy: busyWrites },
        pgPerSessionDay: (grew / sessions) * (86_400_000 / busyMs),
        pgPer1000Samples: ((usage?.bytes ?? 0) / sampleRows) * 1000,
        pgTotalPerSession: totalPg / sessions,
      });
      const f = figures.at(-1) as StepFigures;
      const ms = (x: { p50: number; p99: number }) => `${x.p50.toFixed(0)}/${x.p99.toFixed(0)} ms`;
      log(
        `  RSS MB ${[...f.rssMb].map(([n, v]) => `${n} ${v.toFixed(0)}`).join(", ")}; CPU % of a core ${[...f.cpuShare]
          .filter(([, v]) => v >= 1)
          .map(([n, v]) => `${n} ${v.toFixed(0)}`)
          .join(", ")}`,
      );
      log(
        `  worker leader ${(f.bytesPerSession / 1024).toFixed(1)} KB per session, operators ${(f.bytesPerNode / 1024).toFixed(1)} KB per node, ${f.cpuMsPerChange.toFixed(1)} CPU-ms per state change; placement pass p50/p99 ${ms(f.pass)}; create → Running ${ms(f.createToRunning)}; ${[...f.reads].map(([n, x]) => `${n} ${ms(x)}`).join("; ")}; management writes/min quiet ${f.writesPerMin.quiet.toFixed(0)}, busy ${f.writesPerMin.busy.toFixed(0)}; Postgres ${(f.pgPerSessionDay / 1024).toFixed(0)} KB per session-day, ${(f.pgPer1000Samples / 1024).toFixed(0)} KB per 1,000 usage samples, ${(f.pgTotalPerSession / 1024).toFixed(0)} KB in all per session`,
      );
      log(`  figures taken in ${s2(performance.now() - t0)} from the step's start`);
    }

    // The tables and charts, a measure each.
    const xs = figures.map((f) => f.step.sessions);
    const procNames = [...(figures[0]?.rssMb.keys() ?? [])];
    const measures: Measure[] = [
      {
        key: "rss",
        title: "Resident memory per process",
        unit: "MB",
        x: "running sessions",
        xs,
        series: procNames.map((n) => ({ name: n, values: figures.map((f) => f.rssMb.get(n) ?? Number.NaN) })),
      },
      {
        key: "cpu",
        title: "CPU share while 10 %/min change state",
        unit: "% of a core",
        x: "running sessions",
        xs,
        series: [...new Set(figures.flatMap((f) => [...f.cpuShare.keys()]))]
          .filter((n) => figures.some((f) => (f.cpuShare.get(n) ?? 0) >= 1))
          .map((n) => ({ name: n, values: figures.map((f) => f.cpuShare.get(n) ?? 0) })),
      },
      {
        key: "per-unit-memory",
        title: "Memory per unit (above the empty fleet)",
        unit: "KB",
        x: "running sessions",
        xs,
        series: [
          { name: "worker leader per session", values: figures.map((f) => f.bytesPerSession / 1024) },
          { name: "operators per node", values: figures.map((f) => f.bytesPerNode / 1024) },
        ],
      },
      {
        key: "cpu-per-change",
        title: "CPU per state change (API, worker leader, operators)",
        unit: "ms",
        x: "running sessions",
        xs,
        series: [{ name: "CPU-ms per change", values: figures.map((f) => f.cpuMsPerChange) }],
      },
      {
        key: "placement-pass",
        title: "Placement pass",
        unit: "ms",
        x: "running sessions",
        xs,
        series: [
          { name: "p50", values: figures.map((f) => f.pass.p50) },
          { name: "p99", values: figures.map((f) => f.pass.p99) },
        ],
      },
      {
        key: "create-to-running",
        title: "Create → Running at 2/s",
        unit: "ms",
        x: "running sessions",
        xs,
        series: [
          { name: "p50", values: figures.map((f) => f.createToRunning.p50) },
          { name: "p99", values: figures.map((f) => f.createToRunning.p99) },
        ],
      },
      ...[...(figures[0]?.reads.keys() ?? [])].map(
        (name, i): Measure => ({
          key: `read-${i}`,
          title: name,
          unit: "ms",
          x: "running sessions",
          xs,
          series: [
            { name: "p50", values: figures.map((f) => f.reads.get(name)?.p50 ?? Number.NaN) },
            { name: "p99", values: figures.map((f) => f.reads.get(name)?.p99 ?? Number.NaN) },
          ],
        }),
      ),
      {
        key: "management-writes",
        title: "Management-cluster writes",
        unit: "per minute",
        x: "running sessions",
        xs,
        series: [
          { name: "quiet", values: figures.map((f) => f.writesPerMin.quiet) },
          { name: "10 %/min changing", values: figures.map((f) => f.writesPerMin.busy) },
        ],
      },
      {
        key: "postgres",
        title: "Postgres bytes",
        unit: "KB",
        x: "running sessions",
        xs,
        series: [
          { name: "per session-day (growth)", values: figures.map((f) => f.pgPerSessionDay / 1024) },
          { name: "per 1,000 usage samples", values: figures.map((f) => f.pgPer1000Samples / 1024) },
          { name: "in all, per session", values: figures.map((f) => f.pgTotalPerSession / 1024) },
        ],
      },
    ];
    mkdirSync(OUT, { recursive: true });
    const text: string[] = [];
    for (const m of measures) {
      const t = table(m);
      log(`\n${t}`);
      text.push(t);
    }
    const flat = [
      ["worker leader bytes per session", figures.map((f) => f.bytesPerSession)],
      ["operator bytes per node", figures.map((f) => f.bytesPerNode)],
      ["CPU-ms per state change", figures.map((f) => f.cpuMsPerChange)],
    ] as const;
    const growthLines = flat.map(
      ([n, v]) =>
        `${n}: ${Number.isNaN(growth(v)) ? "n/a" : `${(growth(v) * 100).toFixed(0)} %`} from the first step to the last`,
    );
    for (const l of growthLines) log(l);
    writeFileSync(join(OUT, "figures.txt"), `${[...text, ...growthLines].join("\n\n")}\n`);
    // Charts are a convenience: a browser that will not start must not cost the figures above.
    await writeCharts(measures.map((m) => ({ file: join(OUT, `${m.key}.png`), svg: chartSvg(m) }))).catch(
      (err: unknown) => log(`charts: SVG only (${String(err).slice(0, 200)})`),
    );
    log(`tables and charts in ${OUT}`);

    // A rolling restart of the worker leader: the standby lists everything, then places a new session.
    const r0 = performance.now();
    const stopped = leader.stop();
    await standby.line("session controller started", 600_000);
    const listedMs = performance.now() - r0;
    const u = users[0] as (typeof users)[number];
    const made = await call(u, "createSession", {
      body: { offering: "h100", preset: "gpu-small", image: "jupyterlab" },
    });
    if (!made.ok) throw new Error(`the new leader's create: ${made.status} ${made.code}`);
    for (const deadline = Date.now() + 600_000; ; ) {
      const d = await call(u, "getSession", { params: { sessionId: made.body.id } });
      if (d.ok && d.body.phase === "Running") break;
      if (Date.now() > deadline) throw new Error("the new leader never ran a new session");
      await sleep(100);
    }
    const placedMs = performance.now() - r0;
    await stopped;
    const peak = peakRssBytes(standby.pid) / 2 ** 20;

    const restart = `worker leader restart (SIGTERM) at ${sessionIds.length} sessions: the standby listed everything in ${s2(listedMs)} and placed a new session (Running) in ${s2(placedMs)}; its peak RSS ${peak.toFixed(0)} MB`;
    log(restart);
    writeFileSync(join(OUT, "figures.txt"), `${[...text, ...growthLines, restart].join("\n\n")}\n`);
  } finally {
    await stopAll();
  }
}

await main();
process.exit(0);
