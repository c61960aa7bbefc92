// The gateway as several worker processes sharing one port (runGateway with workers > 1), from a parsed
// configuration as main.ts runs it, against a stand-in control plane and the stand-in application.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { childrenOf, isAlive } from "@berth/e2e";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type RunningStandin, startStandin } from "../standin/standin.ts";
import { type GatewayConfig, gatewayConfigFromEnv } from "./config.ts";
import { cookieFrom, get } from "./gateway.test-support.ts";
import { runGateway } from "./run.ts";
import type { ServingGateway } from "./serving.ts";

let standin: RunningStandin;
let controlPlane: Server;
let dir: string;
let deadPort: number;
/** Sessions the stand-in control plane knows: cr -> phase. */
const phases = new Map<string, string>([
  ["s-a", "Running"],
  ["s-paused", "Paused"],
]);

beforeAll(async () => {
  standin = await startStandin({ name: "workers" });
  const dead = createServer().listen(0, "127.0.0.1");
  await once(dead, "listening");
  deadPort = (dead.address() as AddressInfo).port;
  dead.close();
  // GET /internal/connect/verify as the control plane answers it: any token redeems once for its cr.
  controlPlane = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://cp");
    const cr = url.searchParams.get("cr") ?? "";
    const phase = phases.get(cr);
    const answer = (status: number, body: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (!phase)
      return answer(404, { error: { code: "not_found", message: "gone", details: { reason: "session_gone" } } });
    if (phase !== "Running")
      return answer(409, {
        error: { code: "conflict", message: `session is ${phase}`, details: { reason: "session_not_running", phase } },
      });
    answer(200, { session_id: `ses_${cr}`, cr, cluster_id: "clu_w", user_id: "usr_alice", phase });
  });
  controlPlane.listen(0, "127.0.0.1");
  await once(controlPlane, "listening");
  dir = await mkdtemp(join(tmpdir(), "berth-gw-workers-"));
  await writeFile(join(dir, "token"), "operator-token\n");
});
afterAll(async () => {
  controlPlane?.closeAllConnections();
  controlPlane?.close();
  await standin?.close();
});

function env(over: Record<string, string> = {}): Record<string, string> {
  return {
    BERTH_GATEWAY_CLUSTER_ID: "clu_w",
    BERTH_GATEWAY_CONTROL_PLANE_URL: `http://127.0.0.1:${(controlPlane.address() as AddressInfo).port}`,
    BERTH_GATEWAY_TOKEN_FILE: join(dir, "token"),
    BERTH_GATEWAY_HOST: "127.0.0.1",
    BERTH_GATEWAY_PORT: "0",
    BERTH_GATEWAY_STATIC_UPSTREAMS: `s-paused=127.0.0.1:${deadPort},*=127.0.0.1:${standin.port}`,
    BERTH_GATEWAY_LOG_LEVEL: "silent",
    ...over,
  };
}
const config = (over: Record<string, string> = {}): GatewayConfig => gatewayConfigFromEnv(env(over));

/** Whether nothing listens on the port any more. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(false);
    });
    s.once("error", () => resolve(true));
  });
}

/** Polls until `cond` holds; fails the test after `ms` rather than hanging (not a timing assertion). */
async function until(cond: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Gateway worker processes whose parent is `ppid`. */
async function workersOf(ppid: number): Promise<number[]> {
  const out: number[] = [];
  for (const pid of childrenOf(ppid)) {
    try {
      if ((await readFile(`/proc/${pid}/cmdline`, "utf8")).includes("gateway/worker.ts")) out.push(pid);
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

async function signIn(g: ServingGateway, cr = "s-a"): Promise<string> {
  const r = await get(`${g.url}/proxy/${cr}/lab?svc_cnx=cnx_any`);
  expect(r.status).toBe(303);
  return cookieFrom(r) as string;
}

describe("the gateway with two workers on one port", () => {
  let g: ServingGateway;
  beforeAll(async () => {
    g = await runGateway(config(), { workers: 2 });
  });
  afterAll(async () => {
    await g?.close();
  });

  it("runs two worker processes serving one port", async () => {
    expect(g.pids).toHaveLength(2);
    expect(g.pids).not.toContain(process.pid);
    expect(g.pids.every(isAlive)).toBe(true);
    expect((await get(`${g.url}/healthz`)).body).toBe("ok");
  });

  it("opens the session on every connection with the cookie one worker set (one key for all)", async () => {
    // No key file: the primary makes one random key and hands it to every worker. Twenty fresh
    // connections land on both workers (the kernel spreads them); each must accept the cookie.
    const cookie = await signIn(g);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => get(`${g.url}/proxy/s-a/lab`, { headers: { cookie } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(answers[0]?.body).toContain("<h1>JupyterLab</h1>");
  });

  it("proxies a WebSocket both ways", async () => {
    const cookie = await signIn(g);
    const ws = new WebSocket(`${g.url.replace("http", "ws")}/proxy/s-a/ws/echo`, {
      headers: { cookie, origin: g.url },
    });
    await once(ws, "open");
    const echoed = once(ws, "message");
    ws.send("through a worker");
    expect(String((await echoed)[0])).toBe("through a worker");
    ws.close();
  });

  it("shows the paused page when the session's upstream is gone and the control plane says paused", async () => {
    phases.set("s-paused", "Running");
    const cookie = await signIn(g, "s-paused");
    phases.set("s-paused", "Paused");
    const r = await get(`${g.url}/proxy/s-paused/lab`, { headers: { cookie } });
    expect(r.status).toBe(409);
    expect(r.headers["x-berth-gateway"]).toBe("session_paused");
    expect(r.body).toContain("This session is paused");
  });

  it("replaces a worker that dies, and keeps serving", async () => {
    const [victim, other] = g.pids as [number, number];
    process.kill(victim, "SIGKILL");
    await until(() => g.pids.length === 2 && !g.pids.includes(victim));
    expect(g.pids).toContain(other);
    await until(async () => (await get(`${g.url}/healthz`).catch(() => undefined))?.status === 200);
    expect(await workersOf(process.pid)).toHaveLength(2);
  });
});

describe("the gateway's status port with two workers", () => {
  it("serves the counters of both workers merged (requests counted across both)", async () => {
    const g = await runGateway(config({ BERTH_GATEWAY_STATUS_PORT: "0", BERTH_GATEWAY_STATUS_HOST: "127.0.0.1" }), {
      workers: 2,
    });
    try {
      expect(g.statusUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // Thirty fresh connections: the kernel spreads them over both workers, each counting its own.
      const answers = await Promise.all(Array.from({ length: 30 }, () => get(`${g.url}/healthz`)));
      expect(answers.map((a) => a.status)).toEqual(Array(30).fill(200));
      const refusedOne = await get(`${g.url}/proxy/s-a/lab`);
      expect(refusedOne.status).toBeGreaterThanOrEqual(400);
      const code = `${Math.floor(refusedOne.status / 100)}xx`;
      const r = await get(`${g.statusUrl}/metrics`);
      expect(r.status).toBe(200);
      expect(r.body).toContain("# TYPE berth_gateway_requests_total counter");
      expect(r.body).toMatch(/berth_gateway_requests_total\{code="2xx"\} 30\n/);
      expect(r.body).toMatch(new RegExp(`berth_gateway_requests_total\\{code="${code}"\\} 1\\n`));
      expect((await get(`${g.statusUrl}/other`)).status).toBe(404);
    } finally {
      await g.close();
    }
    expect(await refused(Number(new URL(g.statusUrl as string).port))).toBe(true);
  });

  it("times requests to upstreams in one histogram across both workers, by outcome", async () => {
    const g = await runGateway(config({ BERTH_GATEWAY_STATUS_PORT: "0", BERTH_GATEWAY_STATUS_HOST: "127.0.0.1" }), {
      workers: 2,
    });
    try {
      const cookie = await signIn(g);
      const answers = await Promise.all(
        Array.from({ length: 24 }, () => get(`${g.url}/proxy/s-a/lab`, { headers: { cookie } })),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(24).fill(200));
      // The paused session's upstream refuses connections: no answer, a `failed` outcome (and the page).
      phases.set("s-paused", "Running");
      const pausedCookie = await signIn(g, "s-paused");
      phases.set("s-paused", "Paused");
      const paused = await get(`${g.url}/proxy/s-paused/lab`, { headers: { cookie: pausedCookie } });
      expect(paused.status).toBe(409);
      const ws = new WebSocket(`${g.url.replace("http", "ws")}/proxy/s-a/ws/echo`, {
        headers: { cookie, origin: g.url },
      });
      await once(ws, "open");
      ws.close();
      const body = (await get(`${g.statusUrl}/metrics`)).body;
      expect(body).toContain("# TYPE berth_gateway_upstream_duration_seconds histogram");
      expect(body).toMatch(/berth_gateway_upstream_duration_seconds_count\{outcome="2xx"\} 24\n/);
      expect(body).toMatch(/berth_gateway_upstream_duration_seconds_bucket\{le="\+Inf",outcome="2xx"\} 24\n/);
      expect(body).toMatch(/berth_gateway_upstream_duration_seconds_count\{outcome="upgraded"\} 1\n/);
      expect(body).toMatch(/berth_gateway_upstream_duration_seconds_count\{outcome="failed"\} 1\n/);
      const sum = Number(/berth_gateway_upstream_duration_seconds_sum\{outcome="2xx"\} ([\d.e-]+)/.exec(body)?.[1]);
      expect(sum).toBeGreaterThan(0);
      expect(sum).toBeLessThan(24 * 30);
    } finally {
      await g.close();
    }
  });
});

describe("the gateway's workers and the control plane", () => {
  it("answer 401 when the control plane cannot be reached", async () => {
    const g = await runGateway(config({ BERTH_GATEWAY_CONTROL_PLANE_URL: `http://127.0.0.1:${deadPort}` }), {
      workers: 2,
    });
    try {
      const r = await get(`${g.url}/proxy/s-a/lab?svc_cnx=cnx_any`);
      expect(r.status).toBe(401);
      expect(r.headers["x-berth-gateway"]).toBe("verification_unavailable");
    } finally {
      await g.close();
    }
  });
});

describe("stopping the gateway's workers", () => {
  it("close() leaves no worker process and nothing listening", async () => {
    const g = await runGateway(config(), { workers: 2 });
    const pids = [...g.pids];
    expect(await refused(g.port)).toBe(false);
    await g.close();
    expect(pids.filter(isAlive)).toEqual([]);
    expect(await workersOf(process.pid)).toEqual([]);
    expect(await refused(g.port)).toBe(true);
  });

  it("a port already taken fails the start and leaves no worker behind", async () => {
    const taken = createServer().listen(0, "127.0.0.1");
    await once(taken, "listening");
    try {
      const port = String((taken.address() as AddressInfo).port);
      await expect(runGateway(config({ BERTH_GATEWAY_PORT: port }), { workers: 2 })).rejects.toThrow(/EADDRINUSE/);
      await until(async () => (await workersOf(process.pid)).length === 0);
    } finally {
      taken.close();
    }
  });

  it("workers stop on their own when the primary is killed (SIGKILL)", async () => {
    const primary = spawn(process.execPath, [join(import.meta.dirname, "main.ts")], {
      env: { ...process.env, ...env({ BERTH_GATEWAY_WORKERS: "2", BERTH_GATEWAY_LOG_LEVEL: "info" }) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const lines = createInterface({ input: primary.stdout });
      let listening: { url: string; pids: number[] } | undefined;
      for await (const line of lines) {
        if (line.includes('"session gateway listening"')) {
          listening = JSON.parse(line) as { url: string; pids: number[] };
          break;
        }
      }
      if (!listening) throw new Error("the gateway did not start");
      const { pids, url } = listening;
      expect(pids).toHaveLength(2);
      expect((await get(`${url}/healthz`)).status).toBe(200);
      primary.kill("SIGKILL");
      await until(() => !pids.some(isAlive));
      expect(await refused(Number(new URL(url).port))).toBe(true);
    } finally {
      if (primary.exitCode === null) primary.kill("SIGKILL");
    }
  });

  it("SIGTERM to the primary stops every worker before it exits", async () => {
    const primary = spawn(process.execPath, [join(import.meta.dirname, "main.ts")], {
      env: { ...process.env, ...env({ BERTH_GATEWAY_WORKERS: "2", BERTH_GATEWAY_LOG_LEVEL: "info" }) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let pids: number[] = [];
    try {
      for await (const line of createInterface({ input: primary.stdout })) {
        if (line.includes('"session gateway listening"')) {
          pids = (JSON.parse(line) as { pids: number[] }).pids;
          break;
        }
      }
      expect(pids).toHaveLength(2);
      const exited = once(primary, "exit");
      primary.kill("SIGTERM");
      expect((await exited)[0]).toBe(0);
      expect(pids.filter(isAlive)).toEqual([]);
    } finally {
      // A failure above must not leave the gateway's processes holding a port for the rest of the run.
      if (primary.exitCode === null && primary.signalCode === null) primary.kill("SIGKILL");
      for (const pid of pids.filter(isAlive)) process.kill(pid, "SIGKILL");
    }
  });
});
