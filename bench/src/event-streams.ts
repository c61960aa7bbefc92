// Figure: how many live GET /api/v1/sessions/events streams one API replica holds while sessions change.
// An embedded Postgres seeded with organizations, members and org_admins; the API in its own process
// (api-list-server.ts, the real startApi); the streams opened from another process
// (event-streams-client.ts), each with a member's or an admin's bearer token, so every stream filters
// what its user may see; session events written by this process at --rate per second, as the worker does
// (a `session_events` row, the NOTIFY at commit). At each step of open streams, for --window seconds:
// delivery delay p50/p99/max (arrival minus the event's `at`), heartbeats on time (gap ≤ 16 s; each
// heartbeat re-checks the stream's token), the API's CPU and resident memory, Postgres' CPU.
//   node bench/src/event-streams.ts [--streams 5000] [--steps 500,1000,2000,3000,4000,5000] [--users 1000]
//                                    [--rate 20] [--window 20]
// Targets (issue 24): 5,000 streams, p99 ≤ 250 ms, RSS ≤ 512 MB, no heartbeat late.
import { type ChildProcess, fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { connect, migrateLatest, startPostgres } from "@berth/api";
import type { SessionRow } from "@berth/api/testing";
import { AccessTokens, insertSessionEvents, sessionEventOf, viewFromRow } from "@berth/api/testing";
import { cpuSeconds, cpuSecondsWithChildren, rssBytes } from "@berth/e2e";
import { startServer, stopServer } from "./api-list-bed.ts";

const { values } = parseArgs({
  options: {
    streams: { type: "string", default: "5000" },
    steps: { type: "string" },
    users: { type: "string", default: "1000" },
    orgs: { type: "string", default: "10" },
    rate: { type: "string", default: "20" },
    window: { type: "string", default: "20" },
  },
});
const maxStreams = Number(values.streams);
const steps = (values.steps ?? "500,1000,2000,3000,4000,5000")
  .split(",")
  .map(Number)
  .filter((n) => n <= maxStreams);
if (steps.at(-1) !== maxStreams) steps.push(maxStreams);
const userCount = Number(values.users);
const orgCount = Number(values.orgs);
const rate = Number(values.rate);
const windowS = Number(values.window);
const SECRET = "bench-secret-bench-secret-bench-secret";
const CLIENT = fileURLToPath(new URL("./event-streams-client.ts", import.meta.url));

interface Report {
  events: number;
  p50: number;
  p99: number;
  max: number;
  beatsOnTime: number;
  beatsLate: number;
  worstGap: number;
  ended: number;
  errors: number;
}

const dir = mkdtempSync(join(tmpdir(), "berth-bench-streams-"));
const pg = await startPostgres({ dataDir: join(dir, "data") });
const db = connect(pg.url, { poolMax: 4 });
let api: ChildProcess | undefined;
let client: ChildProcess | undefined;
let writer: NodeJS.Timeout | undefined;
try {
  await migrateLatest(db);
  // Organizations; users spread over them; every 50th user an org_admin (sees its whole organization).
  const orgs = Array.from({ length: orgCount }, (_, i) => ({
    id: `org_bench${i}`,
    name: `Bench ${i}`,
    slug: `bench-${i}`,
  }));
  await db("organizations").insert(orgs);
  const users = Array.from({ length: userCount }, (_, i) => ({
    id: `usr_bench${i}`,
    email: `user${i}@bench.local`,
    password_hash: "unused",
    org: orgs[i % orgCount]?.id as string,
    role: i % 50 === 0 ? "org_admin" : "member",
  }));
  for (let i = 0; i < users.length; i += 500) {
    const chunk = users.slice(i, i + 500);
    await db("users").insert(chunk.map(({ id, email, password_hash }) => ({ id, email, password_hash })));
    await db("memberships").insert(chunk.map((u) => ({ user_id: u.id, organization_id: u.org, role: u.role })));
  }
  await db.raw("ANALYZE");
  const issuer = new AccessTokens({ secret: SECRET, ttlSeconds: 3600 });
  const tokens = await Promise.all(
    users.map(async (u) => (await issuer.issue({ userId: u.id, tokenVersion: 0 })).token),
  );
  // Two sessions a user; each event is one of them changing phase.
  const sessions = users.flatMap((u, i) => [0, 1].map((k) => sessionRow(`ses_bench${i}x${k}`, u.id, u.org)));

  const env = {
    DATABASE_URL: pg.url,
    BERTH_JWT_SECRET: SECRET,
    BERTH_WEBHOOK_SECRET_KEYS: `bench:${Buffer.alloc(32, 1).toString("base64")}`,
    BERTH_ACCESS_TOKEN_TTL_SECONDS: "3600",
  };
  const started = await startServer("api", env);
  api = started.child;
  const apiPid = api.pid as number;

  const c = fork(CLIENT, [], {
    env: { ...process.env, BENCH_API_URL: started.url },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  client = c;
  const waitFor = <T>(key: string) =>
    new Promise<T>((resolve) => {
      const on = (m: Record<string, unknown>) => {
        if (key in m) {
          c.off("message", on);
          resolve(m as T);
        }
      };
      c.on("message", on);
    });
  await waitFor("ready");
  c.send({ tokens });

  // The writer: one event every 1000/rate ms, as the worker writes them (its own transaction, NOTIFY at commit).
  let written = 0;
  let phase = 0;
  const phases = ["Pending", "Scheduled", "Starting", "Running", "Pausing", "Paused"];
  writer = setInterval(() => {
    const s = sessions[Math.floor(Math.random() * sessions.length)] as SessionRow;
    const previous = s.phase;
    s.phase = phases[phase++ % phases.length] as string;
    s.updated_at = new Date();
    void insertSessionEvents(db, [sessionEventOf("session.updated", s, viewFromRow(s), previous)]).then(() => {
      written++;
    });
  }, 1000 / rate);

  process.stdout.write(
    `event streams on one API replica: ${userCount} users in ${orgCount} organizations (${users.filter((u) => u.role === "org_admin").length} org_admins), ${rate} session changes/s, ${windowS} s per step; ${cpus().length} CPUs, load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}\n`,
  );
  const header = `${"streams".padStart(7)} ${"deliveries".padStart(10)} ${"p50 ms".padStart(7)} ${"p99 ms".padStart(7)} ${"max ms".padStart(7)} ${"beats on time".padStart(14)} ${"worst gap s".padStart(11)} ${"API CPU %".padStart(9)} ${"API RSS MB".padStart(10)} ${"PG CPU %".padStart(8)} ${"client CPU %".padStart(12)}  ended/failed\n`;
  process.stdout.write(header);
  let held = 0;
  let passed = false;
  for (const target of steps) {
    c.send({ open: target });
    const { failed } = await waitFor<{ opened: number; failed: number }>("opened");
    // Let the opening settle (first heartbeats, principal loads), then measure a whole window.
    await new Promise((r) => setTimeout(r, 2000));
    c.send({ reset: true });
    const cpu0 = cpuSeconds(apiPid);
    const pg0 = cpuSecondsWithChildren(pg.pid);
    const cl0 = cpuSeconds(c.pid as number);
    const w0 = written;
    await new Promise((r) => setTimeout(r, windowS * 1000));
    c.send({ report: true });
    const { report: r } = await waitFor<{ report: Report }>("report");
    const pct = (d: number) => ((d / windowS) * 100).toFixed(0);
    const rss = rssBytes(apiPid) / 1048576;
    const beats = r.beatsOnTime + r.beatsLate;
    process.stdout.write(
      `${String(target).padStart(7)} ${String(r.events).padStart(10)} ${String(r.p50).padStart(7)} ${String(r.p99).padStart(7)} ${String(r.max).padStart(7)} ${`${r.beatsOnTime}/${beats}`.padStart(14)} ${(r.worstGap / 1000).toFixed(1).padStart(11)} ${pct(cpuSeconds(apiPid) - cpu0).padStart(9)} ${rss.toFixed(0).padStart(10)} ${pct(cpuSecondsWithChildren(pg.pid) - pg0).padStart(8)} ${pct(cpuSeconds(c.pid as number) - cl0).padStart(12)}  ${r.ended}/${failed}   (${((written - w0) / windowS).toFixed(1)} events/s written)\n`,
    );
    if (!passed && r.p99 <= 1000) held = target;
    else passed = true;
  }
  process.stdout.write(
    passed
      ? `held before p99 passed 1 s: ${held} streams\n`
      : `p99 stayed under 1 s up to ${held} streams (the most asked for)\n`,
  );
  process.stdout.write(
    "targets: 5,000 streams, p99 ≤ 250 ms, RSS ≤ 512 MB, every heartbeat on time (each re-checks the token)\n",
  );
} finally {
  if (writer) clearInterval(writer);
  client?.send({ stop: true });
  if (api) await stopServer(api);
  await db.destroy();
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}

function sessionRow(id: string, ownerId: string, organizationId: string): SessionRow {
  const now = new Date();
  return {
    id,
    cr_name: id.replace("_", "-"),
    namespace: "berth-sessions",
    owner_id: ownerId,
    organization_id: organizationId,
    project_id: null,
    display_name: `notebook ${id}`,
    offering: "a100-small",
    preset: "jupyter",
    image: "jupyter/base-notebook:latest",
    gpu_model: "nvidia-a100",
    gpu_count: 1,
    hourly_credit_rate: "10.0000",
    offering_gpu_count: 1,
    gpu_slices_per_card: null,
    gpu_slice_memory_mib: null,
    gpu_mig_profile: null,
    gpu_share_num: null,
    gpu_share_den: null,
    gpu_cards: null,
    cluster_pin: null,
    cluster_id: "gpu-a",
    placed_clusters: ["gpu-a"],
    node: "node-1",
    phase: "Pending",
    desired_state: "Running",
    priority: 0,
    queue_position: null,
    reason: null,
    message: null,
    mirror_revision: 1,
    interim_status: null,
    mirror_restarts: 0,
    created_at: now,
    updated_at: now,
    queued_at: null,
    scheduled_at: now,
    started_at: null,
    paused_at: null,
    terminated_at: null,
    resource_deleted_at: null,
    capacity_class: "guaranteed",
    rate_permille: 1000,
  };
}
