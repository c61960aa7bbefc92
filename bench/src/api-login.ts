// Figure: POST /api/v1/auth/login through the whole API (argon2id verify dominates), p50 and p99.
//   node bench/src/api-login.ts [--duration 10] [--connections 8]
// Fewer connections than api-list: each login holds ~19 MiB and a CPU for the hash; the figure of
// interest is latency, not a saturated queue.
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_ARGON2, describeParams, PasswordHasher } from "../../api/src/auth/password.ts";
import { parseConfig } from "../../api/src/config.ts";
import { connect, migrateLatest } from "../../api/src/db/knex.ts";
import { startPostgres } from "../../api/src/db/server.ts";
import { startApi } from "../../api/src/main.ts";

interface CannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; max: number };
  non2xx: number;
  errors: number;
}
type Cannon = (opts: {
  url: string;
  method: string;
  connections: number;
  duration: number;
  headers: Record<string, string>;
  body: string;
}) => Promise<CannonResult>;
const autocannon = createRequire(import.meta.url)("autocannon") as Cannon;

const { values } = parseArgs({
  options: { duration: { type: "string", default: "10" }, connections: { type: "string", default: "8" } },
});
const duration = Number(values.duration);
const connections = Number(values.connections);

const dir = mkdtempSync(join(tmpdir(), "berth-bench-"));
const pg = await startPostgres({ dataDir: join(dir, "data") });
try {
  const db = connect(pg.url, { poolMax: 2 });
  await migrateLatest(db);
  const password = "bench-password-123";
  await db("users").insert({
    id: "usr_benchlogin",
    email: "login@bench.local",
    password_hash: await new PasswordHasher().hash(password),
    must_change_password: false,
  });
  await db.destroy();

  const config = parseConfig({
    DATABASE_URL: pg.url,
    BERTH_JWT_SECRET: "bench-secret-bench-secret-bench-secret",
    BERTH_API_HOST: "127.0.0.1",
    BERTH_API_PORT: "0",
    BERTH_LOG_LEVEL: "warn",
  });
  const api = await startApi({ config, startupTasks: [] });
  try {
    const req = {
      url: `${api.url}/api/v1/auth/login`,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "login@bench.local", password }),
    };
    const probe = await fetch(req.url, { method: "POST", headers: req.headers, body: req.body });
    if (probe.status !== 200) throw new Error(`login answered ${probe.status}: ${await probe.text()}`);
    await autocannon({ ...req, connections, duration: 2 });
    const r = await autocannon({ ...req, connections, duration });
    process.stdout.write(
      `\nlogin, ${connections} connections, ${duration} s (API in this process); ${cpus().length} CPUs, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}\n` +
        `argon2id ${describeParams(DEFAULT_ARGON2)}\n` +
        `req/s ${r.requests.average.toFixed(1)}  p50 ${r.latency.p50} ms  p99 ${r.latency.p99} ms  max ${r.latency.max} ms  non-2xx ${r.non2xx}, errors ${r.errors}\n`,
    );
  } finally {
    await api.stop();
  }
} finally {
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
