// The operator's table of session pods (GET /routes on its status port) followed by a real gateway over
// real HTTP, with two real upstream servers standing in for a pod before and after it moved: the gateway
// follows a move within a second, shows the page when the pod goes, refuses a caller without the
// cluster's operator token, waits out a follower's 503, keeps its table through an operator restart, and
// drops it when no operator answers for too long.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionRoutes, type StatusServer, startStatusServer } from "@berth/controllers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cookieFrom, FakeVerifier, get } from "./gateway/gateway.test-support.ts";
import { type RunningGateway, startGateway } from "./gateway/gateway.ts";
import { RouteFeedUpstreams } from "./gateway/upstream.ts";
import { type RoutesFeed, routesFeed } from "./routes.ts";
import { type RunningStandin, startStandin } from "./standin/standin.ts";

const dir = mkdtempSync(join(tmpdir(), "berth-routes-"));
const tokenFile = join(dir, "operator-token");
writeFileSync(tokenFile, "op-token-of-this-cluster\n");
const registry = { contentType: "text/plain", metrics: async () => "" };

let before: RunningStandin;
let after: RunningStandin;
let routes: SessionRoutes;
let ready = true;
let feed: RoutesFeed;
let server: StatusServer;
let port = 0;
let upstreams: RouteFeedUpstreams;
let gw: RunningGateway;
const verifier = new FakeVerifier();
/** Asks for the table while the operator side was not ready (answered 503). */
let refused = 0;

async function startOperatorSide(): Promise<void> {
  feed = routesFeed({ routes, ready: () => ready, tokenFile, heartbeatMs: 200 });
  server = await startStatusServer({
    host: "127.0.0.1",
    port,
    health: () => ({ ok: true }),
    registry,
    handle: (path, req, res) => {
      if (path === "/routes" && !ready) refused++;
      return feed.handle(path, req, res);
    },
  });
  port = Number(new URL(server.url).port);
}

async function until(what: string, pred: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    if (await pred()) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  // The pod before and after it moved: two addresses (loopback has all of 127/8), two processes' worth of
  // listeners that say which one answered.
  before = await startStandin({ host: "127.0.0.1", name: "the pod before" });
  after = await startStandin({ host: "127.0.0.2", name: "the pod after" });
  routes = new SessionRoutes();
  routes.set("s-a", { host: "127.0.0.1", port: before.port });
  await startOperatorSide();
  upstreams = new RouteFeedUpstreams({ url: () => `${server.url}/routes`, tokenFile, silenceMs: 1000 }).start();
  await upstreams.synced();
  verifier.session({ sessionId: "ses_a", cr: "s-a", clusterId: "clu_a", ownerId: "usr_alice", phase: "Running" });
  gw = await startGateway({ clusterId: "clu_a", verifier, upstreams, upstreamConnectTimeoutMs: 1000 });
});

afterAll(async () => {
  await gw?.close();
  feed?.closeAll();
  await server?.close();
  await before?.close();
  await after?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function signIn(): Promise<string> {
  const t = verifier.issue(`cnx_${Math.random()}`, "ses_a", "usr_alice");
  const r = await get(`${gw.url}/proxy/s-a/lab?svc_cnx=${t}`);
  expect(r.status).toBe(303);
  return cookieFrom(r) as string;
}

describe("the gateway following the operator's routes", () => {
  it("reaches the pod at its address, follows it within a second when it moves, and says paused once it is gone", async () => {
    const cookie = await signIn();
    const lab = () => get(`${gw.url}/proxy/s-a/lab`, { headers: { cookie } });
    expect((await lab()).body).toContain("the pod before");

    routes.set("s-a", { host: "127.0.0.2", port: after.port }); // restarted elsewhere
    const moved = await until("the gateway answers from the pod's new address", async () =>
      (await lab()).body.includes("the pod after"),
    );
    expect(moved).toBeLessThan(1000);

    const session = verifier.sessions.get("ses_a") as { phase: string };
    session.phase = "Paused";
    routes.set("s-a", undefined); // paused: no pod, no route
    await until("the paused page", async () => (await lab()).headers["x-berth-gateway"] === "session_paused");
    expect(upstreams.resolve("s-a")).toBeUndefined();
    session.phase = "Running";
  });

  it("refuses a caller without the cluster's operator token, and answers 503 until this operator leads", async () => {
    expect((await get(`${server.url}/routes`)).status).toBe(401);
    expect((await get(`${server.url}/routes`, { headers: { authorization: "Bearer someone-else" } })).status).toBe(401);
    ready = false;
    try {
      const r = await get(`${server.url}/routes`, { headers: { authorization: "Bearer op-token-of-this-cluster" } });
      expect(r.status).toBe(503);
    } finally {
      ready = true;
    }
  });

  it("keeps the last table while the operator restarts (a follower first), and takes the new leader's whole", async () => {
    routes.set("s-a", { host: "127.0.0.1", port: before.port });
    await until("the route is followed", () => upstreams.resolve("s-a")?.host === "127.0.0.1");
    feed.closeAll();
    await server.close();
    // Meanwhile the pod moved and another session started; the gateway still routes s-a where it was.
    routes.set("s-a", { host: "127.0.0.2", port: after.port });
    routes.set("s-b", { host: "127.0.0.2", port: after.port });
    expect(upstreams.resolve("s-a")).toEqual({ host: "127.0.0.1", port: before.port });
    ready = false; // the new operator does not lead yet: 503, tried again
    const asked = refused;
    await startOperatorSide();
    // The gateway has asked the new operator (a follower: 503) and still routes by the last table.
    await until("the gateway refused by the follower", () => refused > asked);
    expect(upstreams.resolve("s-b")).toBeUndefined();
    expect(upstreams.resolve("s-a")).toEqual({ host: "127.0.0.1", port: before.port });
    ready = true;
    await until("the new leader's table", () => upstreams.resolve("s-b") !== undefined, 5000);
    expect(upstreams.resolve("s-a")).toEqual({ host: "127.0.0.2", port: after.port });
  });

  it("drops the last table once no operator has answered for its stale limit", async () => {
    const disconnects: string[] = [];
    const short = new RouteFeedUpstreams({
      url: () => `${server.url}/routes`,
      tokenFile,
      staleMs: 400,
      onState: (state, why) => {
        if (state === "disconnected") disconnects.push(why ?? "");
      },
    }).start();
    try {
      await short.synced();
      expect(short.resolve("s-b")).toBeDefined();
      ready = false; // the operator goes follower: streams end, and the next answers are 503
      feed.closeAll();
      // Its stream ended, then its first ask again was refused (a 503): the table is kept meanwhile.
      await until("a reconnect refused", () => disconnects.length >= 2);
      expect(disconnects[0]).toBe("the operator ended the stream");
      expect(short.resolve("s-b")).toBeDefined(); // kept through a short failover
      await until("the table dropped", () => short.size === 0, 5000);
    } finally {
      ready = true;
      await short.close();
    }
  });
});
