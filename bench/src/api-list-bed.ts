// What the API list benches (api-list.ts, page-cache.ts) start and measure: an embedded Postgres, migrated
// and seeded with a super_admin and 200 users (the users list's page of 20 has rows to carry), the admin's
// bearer token, and servers of api-list-server.ts, each in its own process so autocannon never shares its
// event loop; a run's figures include each side's CPU per request from /proc, which a loaded machine
// disturbs far less than throughput.
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connect, migrateLatest, startPostgres } from "@berth/api";
import { AccessTokens } from "@berth/api/testing";
import { cpuSeconds, cpuSecondsWithChildren } from "@berth/e2e";

const SECRET = "bench-secret-bench-secret-bench-secret";
const SERVER = fileURLToPath(new URL("./api-list-server.ts", import.meta.url));

export interface UsersBed {
  /** The postmaster's pid: its CPU with its backends' is Postgres' share of a request. */
  pgPid: number;
  /** A bearer token of the super_admin. */
  token: string;
  /** What a server of api-list-server.ts needs in its environment. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startUsersBed(): Promise<UsersBed> {
  const dir = mkdtempSync(join(tmpdir(), "berth-bench-"));
  const pg = await startPostgres({ dataDir: join(dir, "data") });
  const stop = async () => {
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const db = connect(pg.url, { poolMax: 2 });
    await migrateLatest(db);
    const adminId = `usr_${randomUUID().replaceAll("-", "").slice(0, 20)}`;
    await db("users").insert({
      id: adminId,
      email: "bench-admin@berth.local",
      password_hash: "unused",
      must_change_password: false,
      is_super_admin: true,
    });
    await db("users").insert(
      Array.from({ length: 200 }, (_, i) => ({
        id: `usr_bench${i}`,
        email: `user${i}@bench.local`,
        password_hash: "unused",
      })),
    );
    // Planner statistics, as autovacuum would have them on a live database (it may not have run yet here).
    await db.raw("ANALYZE users");
    await db.destroy();
    const token = (
      await new AccessTokens({ secret: SECRET, ttlSeconds: 3600 }).issue({ userId: adminId, tokenVersion: 0 })
    ).token;
    const env = {
      DATABASE_URL: pg.url,
      BERTH_JWT_SECRET: SECRET,
      BERTH_WEBHOOK_SECRET_KEYS: `bench:${Buffer.alloc(32, 1).toString("base64")}`,
      BERTH_ACCESS_TOKEN_TTL_SECONDS: "3600",
    };
    return { pgPid: pg.pid, token, env, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** A server of api-list-server.ts in `mode`, started with `nodeArgs` before the script; its URL once it listens. */
export async function startServer(
  mode: string,
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [...nodeArgs, SERVER, mode], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString();
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) resolve(line.trim());
    });
    child.once("exit", (code) => reject(new Error(`${mode} server exited with ${code}`)));
  });
  return { url, child };
}

export async function stopServer(child: ChildProcess): Promise<void> {
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

interface CannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p90: number; p99: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Cannon = (opts: {
  url: string;
  connections: number;
  duration: number;
  headers: Record<string, string>;
}) => Promise<CannonResult>;
const autocannon = createRequire(import.meta.url)("autocannon") as Cannon;

export interface ServerRun {
  rps: number;
  /** Milliseconds. */
  latency: { p50: number; p90: number; p99: number; max: number };
  /** CPU of the server's process per request, µs. */
  serverUs: number;
  /** CPU of Postgres (the postmaster and its backends) per request, µs: a query that costs it more is part of a request's cost. */
  pgUs: number;
  /** Non-2xx answers, errors and timeouts. */
  bad: number;
}

/**
 * Starts a server of api-list-server.ts, checks that `path` answers 200, warms it up for 2 s (JIT, pool),
 * then loads it for `duration` seconds and stops it.
 */
export async function measureServer(
  bed: UsersBed,
  o: {
    mode: string;
    path: string;
    connections: number;
    duration: number;
    env?: Record<string, string>;
    nodeArgs?: readonly string[];
  },
): Promise<ServerRun> {
  const { url, child } = await startServer(o.mode, o.env ?? bed.env, o.nodeArgs);
  try {
    const headers = { authorization: `Bearer ${bed.token}` };
    const probe = await fetch(url + o.path, { headers });
    if (probe.status !== 200) throw new Error(`${o.mode}: ${o.path} answered ${probe.status}: ${await probe.text()}`);
    await autocannon({ url: url + o.path, connections: o.connections, duration: 2, headers });
    const pid = child.pid;
    if (pid === undefined) throw new Error(`${o.mode}: the server has no pid`);
    const cpuBefore = cpuSeconds(pid);
    const pgBefore = cpuSecondsWithChildren(bed.pgPid);
    const r = await autocannon({ url: url + o.path, connections: o.connections, duration: o.duration, headers });
    const n = Math.max(1, r.requests.total);
    return {
      rps: r.requests.average,
      latency: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max },
      serverUs: ((cpuSeconds(pid) - cpuBefore) * 1e6) / n,
      pgUs: ((cpuSecondsWithChildren(bed.pgPid) - pgBefore) * 1e6) / n,
      bad: r.non2xx + r.errors + r.timeouts,
    };
  } finally {
    await stopServer(child);
  }
}
