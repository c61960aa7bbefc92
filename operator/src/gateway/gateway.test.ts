// The gateway with a stand-in application behind it, over TLS, against an in-memory verifier.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import { request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type RunningStandin, startStandin } from "../standin/standin.ts";
import { cookieFrom, FakeVerifier, get } from "./gateway.test-support.ts";
import { type RunningGateway, startGateway } from "./gateway.ts";
import { selfSignedCertificate } from "./selfSigned.ts";
import { StaticUpstreams } from "./upstream.ts";
import { httpVerifier } from "./verifier.ts";

const tls = selfSignedCertificate({ names: ["127.0.0.1", "localhost"] });
const ca = tls.certPem;
let standin: RunningStandin;
let gw: RunningGateway;
let verifier: FakeVerifier;
let upstreams: StaticUpstreams;
const clock = {
  t: Date.parse("2026-11-22T10:00:00Z"),
  now() {
    return this.t;
  },
};
let n = 0;
const nextToken = (): string => `cnx_test_${++n}`;

beforeAll(async () => {
  standin = await startStandin({ name: "test" });
  verifier = new FakeVerifier();
  upstreams = new StaticUpstreams();
  gw = await startGateway({
    clusterId: "clu_a",
    verifier,
    upstreams,
    tls,
    clock,
    cookieTtlSeconds: 600,
    upstreamConnectTimeoutMs: 1000,
  });
});
afterAll(async () => {
  await gw?.close();
  await standin?.close();
});
beforeEach(() => {
  verifier.sessions.clear();
  verifier.down = undefined;
  verifier.session({ sessionId: "ses_a", cr: "s-a", clusterId: "clu_a", ownerId: "usr_alice", phase: "Running" });
  verifier.session({ sessionId: "ses_b", cr: "s-b", clusterId: "clu_a", ownerId: "usr_bob", phase: "Running" });
  upstreams.set("s-a", `127.0.0.1:${standin.port}`);
  upstreams.set("s-b", `127.0.0.1:${standin.port}`);
});

/** Redeems a fresh token for the session and returns the cookie pair. */
async function signIn(sessionId: string, cr: string, userId: string): Promise<string> {
  const t = verifier.issue(nextToken(), sessionId, userId);
  const r = await get(`${gw.url}/proxy/${cr}/lab?svc_cnx=${t}`, { ca });
  expect(r.status).toBe(303);
  return cookieFrom(r) as string;
}

function openWs(
  path: string,
  headers: Record<string, string>,
): Promise<{ ws?: WebSocket; status?: number; reason?: string }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${gw.url.replace("https", "wss")}${path}`, { ca, headers });
    ws.once("open", () => resolve({ ws }));
    ws.once("unexpected-response", (_req, res) =>
      resolve({ status: res.statusCode, reason: String(res.headers["x-berth-gateway"] ?? "") }),
    );
    ws.once("error", () => resolve({}));
  });
}

describe("redeeming a connect link", () => {
  it("sets a short-lived, HttpOnly, Lax, Secure cookie for /proxy/{cr}/ and redirects to the same URL without the token", async () => {
    const t = verifier.issue(nextToken(), "ses_a", "usr_alice");
    const r = await get(`${gw.url}/proxy/s-a/lab?x=1&svc_cnx=${t}&y=2`, { ca });
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe("/proxy/s-a/lab?x=1&y=2");
    const set = (r.headers["set-cookie"] ?? [])[0] ?? "";
    expect(set).toMatch(/^berth_cnx=[^;]+; Path=\/proxy\/s-a\/; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/);
    expect(r.headers["cache-control"]).toBe("no-store");
    expect(r.headers["referrer-policy"]).toBe("no-referrer");
  });

  it("works once: the same link again shows 'already used'", async () => {
    const t = verifier.issue(nextToken(), "ses_a", "usr_alice");
    expect((await get(`${gw.url}/proxy/s-a/lab?svc_cnx=${t}`, { ca })).status).toBe(303);
    const again = await get(`${gw.url}/proxy/s-a/lab?svc_cnx=${t}`, { ca });
    expect(again.status).toBe(403);
    expect(again.headers["x-berth-gateway"]).toBe("token_used");
    expect(again.body).toContain("already been used");
  });

  it("refuses a link for session A opened on session B", async () => {
    const t = verifier.issue(nextToken(), "ses_a", "usr_alice");
    const r = await get(`${gw.url}/proxy/s-b/lab?svc_cnx=${t}`, { ca });
    expect(r.status).toBe(403);
    expect(r.headers["x-berth-gateway"]).toBe("other_session");
  });

  it("refuses an expired link clearly", async () => {
    const t = verifier.issue(nextToken(), "ses_a", "usr_alice", { expired: true });
    const r = await get(`${gw.url}/proxy/s-a/lab?svc_cnx=${t}`, { ca });
    expect(r.status).toBe(403);
    expect(r.body).toContain("This link has expired");
  });

  it("shows 'paused' for a paused session", async () => {
    verifier.session({ sessionId: "ses_a", cr: "s-a", clusterId: "clu_a", ownerId: "usr_alice", phase: "Paused" });
    const t = verifier.issue(nextToken(), "ses_a", "usr_alice");
    const r = await get(`${gw.url}/proxy/s-a/lab?svc_cnx=${t}`, { ca });
    expect(r.status).toBe(409);
    expect(r.headers["x-berth-gateway"]).toBe("session_paused");
    expect(r.body).toContain("This session is paused");
  });

  it("answers 401 when the control plane cannot be asked", async () => {
    verifier.down = "ECONNREFUSED";
    const r = await get(`${gw.url}/proxy/s-a/lab?svc_cnx=${nextToken()}`, { ca });
    expect(r.status).toBe(401);
    expect(r.headers["x-berth-gateway"]).toBe("verification_unavailable");
  });

  it("refuses two tokens in one link", async () => {
    expect((await get(`${gw.url}/proxy/s-a/lab?svc_cnx=a&svc_cnx=b`, { ca })).status).toBe(400);
  });
});

describe("with the cookie", () => {
  it("proxies HTTP to the session's application", async () => {
    const cookie = await signIn("ses_a", "s-a", "usr_alice");
    for (const [path, title] of [
      ["lab", "JupyterLab"],
      ["terminal", "Terminal"],
      ["code/", "Code editor"],
    ]) {
      const r = await get(`${gw.url}/proxy/s-a/${path}`, { ca, headers: { cookie } });
      expect(r.status).toBe(200);
      expect(r.body).toContain(`<h1>${title}</h1>`);
    }
  });

  it("never shows the gateway cookie to the session, and says where the request came from", async () => {
    const cookie = await signIn("ses_a", "s-a", "usr_alice");
    const r = await get(`${gw.url}/proxy/s-a/api/echo?q=1`, { ca, headers: { cookie: `${cookie}; theme=dark` } });
    const echo = JSON.parse(r.body) as { path: string; query: string; headers: Record<string, string> };
    expect(echo.path).toBe("/proxy/s-a/api/echo");
    expect(echo.query).toBe("?q=1");
    expect(echo.headers.cookie).toBe("theme=dark");
    expect(echo.headers["x-forwarded-proto"]).toBe("https");
    expect(echo.headers["x-forwarded-prefix"]).toBe("/proxy/s-a");
  });

  it("pins cookies the session sets to the session's own path", async () => {
    const cookie = await signIn("ses_a", "s-a", "usr_alice");
    const r = await get(`${gw.url}/proxy/s-a/api/echo`, { ca, headers: { cookie } });
    expect(r.headers["set-cookie"]).toEqual(["_xsrf=standin; Path=/proxy/s-a/"]);
  });

  it("proxies a WebSocket both ways", async () => {
    const cookie = await signIn("ses_a", "s-a", "usr_alice");
    const { ws } = await openWs("/proxy/s-a/ws/echo", { cookie, origin: gw.url.replace(/\/$/, "") });
    expect(ws).toBeDefined();
    const echoed = new Promise<string>((resolve) => ws?.once("message", (d) => resolve(String(d))));
    ws?.send("hello through the gateway");
    expect(await echoed).toBe("hello through the gateway");
    ws?.close();
  });

  it("refuses a WebSocket without a cookie, and one opened from another origin", async () => {
    expect(await openWs("/proxy/s-a/ws/echo", {})).toMatchObject({ status: 401, reason: "no_cookie" });
    const cookie = await signIn("ses_a", "s-a", "usr_alice");
    expect(await openWs("/proxy/s-a/ws/echo", { cookie, origin: "https://evil.example" })).toMatchObject({
      status: 403,
      reason: "cross_origin",
    });
  });

  it("does not open another user's session with one's own cookie", async () => {
    const bobs = await signIn("ses_b", "s-b", "usr_bob");
    const r = await get(`${gw.url}/proxy/s-a/lab`, { ca, headers: { cookie: bobs } });
    expect(r.status).toBe(401);
    expect(await openWs("/proxy/s-a/ws/echo", { cookie: bobs })).toMatchObject({ status: 401 });
  });

  it("does not open anything without a cookie, or with a forged one", async () => {
    expect((await get(`${gw.url}/proxy/s-a/lab`, { ca })).status).toBe(401);
    const real = await signIn("ses_a", "s-a", "usr_alice");
    const dot = real.lastIndexOf(".");
    // Change a signature character that carries full bits (the last one of 43 carries only 4 of its 6).
    const forged = `${real.slice(0, dot + 5)}${real[dot + 5] === "A" ? "B" : "A"}${real.slice(dot + 6)}`;
    expect((await get(`${gw.url}/proxy/s-a/lab`, { ca, headers: { cookie: forged } })).status).toBe(401);
  });

  it("shows 'paused' when the session was paused after sign-in", async () => {
    const cookie = await signIn("ses_a", "s-a", "usr_alice");
    verifier.session({ sessionId: "ses_a", cr: "s-a", clusterId: "clu_a", ownerId: "usr_alice", phase: "Paused" });
    upstreams.delete("s-a");
    const r = await get(`${gw.url}/proxy/s-a/lab`, { ca, headers: { cookie } });
    expect(r.status).toBe(409);
    expect(r.body).toContain("This session is paused");
    expect(await openWs("/proxy/s-a/ws/echo", { cookie })).toMatchObject({ status: 409, reason: "session_paused" });
  });

  it("answers promptly with a page when the upstream refuses connections", async () => {
    const cookie = await signIn("ses_a", "s-a", "usr_alice");
    const dead = createServer();
    dead.listen(0, "127.0.0.1");
    await once(dead, "listening");
    const port = (dead.address() as AddressInfo).port;
    dead.close();
    upstreams.set("s-a", `127.0.0.1:${port}`);
    const r = await get(`${gw.url}/proxy/s-a/lab`, { ca, headers: { cookie } });
    expect(r.status).toBe(502);
    expect(r.headers["x-berth-gateway"]).toBe("upstream_unreachable");
  });

  it("renews the cookie past half its life after the control plane agrees", async () => {
    const cookie = await signIn("ses_a", "s-a", "usr_alice");
    clock.t += 301_000;
    try {
      const r = await get(`${gw.url}/proxy/s-a/lab`, { ca, headers: { cookie } });
      expect(r.status).toBe(200);
      const renewed = cookieFrom(r);
      expect(renewed).toBeDefined();
      expect(renewed).not.toBe(cookie);
    } finally {
      clock.t -= 301_000;
    }
  });

  it("ends access at renewal when the user may no longer use the session", async () => {
    const cookie = await signIn("ses_a", "s-a", "usr_alice");
    verifier.session({ sessionId: "ses_a", cr: "s-a", clusterId: "clu_a", ownerId: "usr_carol", phase: "Running" });
    clock.t += 301_000;
    try {
      const r = await get(`${gw.url}/proxy/s-a/lab`, { ca, headers: { cookie } });
      expect(r.status).toBe(403);
      expect(r.headers["set-cookie"]?.[0]).toContain("Max-Age=0");
    } finally {
      clock.t -= 301_000;
    }
  });

  it("refuses an expired cookie", async () => {
    const cookie = await signIn("ses_a", "s-a", "usr_alice");
    clock.t += 600_000;
    try {
      const r = await get(`${gw.url}/proxy/s-a/lab`, { ca, headers: { cookie } });
      expect(r.status).toBe(401);
      expect(r.headers["x-berth-gateway"]).toBe("cookie_expired");
    } finally {
      clock.t -= 600_000;
    }
  });
});

describe("forwarding to the session", () => {
  // An upstream that answers what it received, and a large answer for streaming.
  let echo: Server;
  const big = Buffer.alloc(8 * 1024 * 1024, "abcdefgh");
  beforeAll(async () => {
    echo = createServer((req, res) => {
      if (req.url?.endsWith("/big"))
        return void res.writeHead(200, { "content-type": "application/octet-stream" }).end(big);
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        res.writeHead(201, "Made", { "content-type": "application/json", "x-up": "1" });
        res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
      });
    });
    echo.listen(0, "127.0.0.1");
    await once(echo, "listening");
  });
  afterAll(() => {
    echo.closeAllConnections();
    echo.close();
  });
  beforeEach(() => upstreams.set("s-a", `127.0.0.1:${(echo.address() as AddressInfo).port}`));

  it("forwards the method, the full path and query, and a body with its length or chunked", async () => {
    const cookie = await signIn("ses_a", "s-a", "usr_alice");
    const sized = await get(`${gw.url}/proxy/s-a/api/contents?x=1`, {
      ca,
      method: "PUT",
      headers: { cookie, "content-type": "application/json" },
      body: '{"content":"print(1)"}',
    });
    expect(sized.status).toBe(201);
    expect(JSON.parse(sized.body)).toMatchObject({
      method: "PUT",
      url: "/proxy/s-a/api/contents?x=1",
      body: '{"content":"print(1)"}',
      headers: { "content-length": "22", "content-type": "application/json" },
    });
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const r = httpsRequest(
        `${gw.url}/proxy/s-a/upload`,
        { method: "POST", ca, agent: false, headers: { cookie, "transfer-encoding": "chunked" } },
        (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => (body += c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      r.on("error", reject);
      r.write("part one, ");
      setTimeout(() => r.end("part two"), 20);
    });
    expect(JSON.parse(chunked.body)).toMatchObject({ method: "POST", body: "part one, part two" });
  });

  it("relays the upstream's status and headers, and streams a large answer intact", async () => {
    const cookie = await signIn("ses_a", "s-a", "usr_alice");
    const r = await get(`${gw.url}/proxy/s-a/api/echo`, { ca, headers: { cookie } });
    expect(r.status).toBe(201);
    expect(r.headers["x-up"]).toBe("1");
    const bytes = await new Promise<Buffer>((resolve, reject) => {
      httpsRequest(`${gw.url}/proxy/s-a/big`, { ca, agent: false, headers: { cookie } }, (res) => {
        const chunks: Buffer[] = [];
        // A slow reader: the gateway must hold back the upstream, not buffer or drop.
        res.on("data", (c: Buffer) => {
          chunks.push(c);
          res.pause();
          setTimeout(() => res.resume(), 1);
        });
        res.on("end", () => resolve(Buffer.concat(chunks)));
        res.on("error", reject);
      })
        .on("error", reject)
        .end();
    });
    expect(bytes.length).toBe(big.length);
    expect(bytes.equals(big)).toBe(true);
  });
});

describe("paths", () => {
  it("answers health, adds the slash after the session name, and 404s the rest", async () => {
    expect((await get(`${gw.url}/healthz`, { ca })).body).toBe("ok");
    const r = await get(`${gw.url}/proxy/s-a?svc_cnx=x`, { ca });
    expect(r.status).toBe(308);
    expect(r.headers.location).toBe("/proxy/s-a/?svc_cnx=x");
    expect((await get(`${gw.url}/elsewhere`, { ca })).status).toBe(404);
  });
});

describe("the HTTP verifier", () => {
  let cp: Server;
  let cpUrl: string;
  let answer: (url: URL, headers: Record<string, unknown>) => [number, unknown] | "hang";
  const seen: Array<{ url: string; auth?: string; token?: string }> = [];
  beforeAll(async () => {
    cp = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://cp");
      seen.push({
        url: req.url ?? "",
        auth: req.headers.authorization,
        token: req.headers["x-berth-connect-token"] as string | undefined,
      });
      const a = answer(url, req.headers);
      if (a === "hang") return;
      res.writeHead(a[0], { "content-type": "application/json" }).end(JSON.stringify(a[1]));
    });
    cp.listen(0, "127.0.0.1");
    await once(cp, "listening");
    cpUrl = `http://127.0.0.1:${(cp.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    cp.closeAllConnections();
    cp.close();
  });

  const tokenFile = async (content: string): Promise<string> => {
    const { mkdtemp, writeFile } = await import("node:fs/promises");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const f = join(await mkdtemp(join(tmpdir(), "berth-gw-")), "token");
    await writeFile(f, content);
    return f;
  };

  it("sends the operator token as bearer and the connect token in a header, not the query", async () => {
    answer = () => [
      200,
      { session_id: "ses_a", cr: "s-a", cluster_id: "clu_a", user_id: "usr_alice", phase: "Running" },
    ];
    const v = httpVerifier({ baseUrl: cpUrl, tokenFile: await tokenFile("op-token\n") });
    const out = await v.redeem({ cr: "s-a", token: "cnx_secret" });
    expect(out).toEqual({
      kind: "grant",
      grant: { sessionId: "ses_a", crName: "s-a", clusterId: "clu_a", userId: "usr_alice", phase: "Running" },
    });
    const last = seen.at(-1);
    expect(last?.auth).toBe("Bearer op-token");
    expect(last?.token).toBe("cnx_secret");
    expect(last?.url).toBe("/internal/connect/verify?cr=s-a");
  });

  it("reads refusals from the error envelope", async () => {
    answer = () => [
      409,
      { error: { code: "conflict", message: "paused", details: { reason: "session_not_running", phase: "Paused" } } },
    ];
    const v = httpVerifier({ baseUrl: cpUrl, tokenFile: await tokenFile("t") });
    expect(await v.check({ cr: "s-a", sessionId: "ses_a", userId: "usr_alice" })).toEqual({
      kind: "refused",
      refusal: { code: "conflict", reason: "session_not_running", phase: "Paused", message: "paused" },
    });
  });

  it("counts our own token refused (401, or 403 with no connect reason) as unavailable", async () => {
    const v = httpVerifier({ baseUrl: cpUrl, tokenFile: await tokenFile("t") });
    answer = () => [401, { error: { code: "token_expired", message: "expired" } }];
    expect((await v.redeem({ cr: "s-a", token: "x" })).kind).toBe("unavailable");
    answer = () => [403, { error: { code: "forbidden", message: "closed" } }];
    expect((await v.redeem({ cr: "s-a", token: "x" })).kind).toBe("unavailable");
  });

  it("gives up at its deadline, and on a missing token file", async () => {
    answer = () => "hang";
    const v = httpVerifier({ baseUrl: cpUrl, tokenFile: await tokenFile("t"), timeoutMs: 200 });
    const started = Date.now();
    expect((await v.redeem({ cr: "s-a", token: "x" })).kind).toBe("unavailable");
    expect(Date.now() - started).toBeLessThan(5000);
    const missing = httpVerifier({ baseUrl: cpUrl, tokenFile: "/nonexistent/token" });
    expect((await missing.redeem({ cr: "s-a", token: "x" })).kind).toBe("unavailable");
  });

  it("makes the gateway answer 401 when the control plane's address refuses connections", async () => {
    const g = await startGateway({
      clusterId: "clu_a",
      verifier: httpVerifier({ baseUrl: "http://127.0.0.1:9", tokenFile: await tokenFile("t"), timeoutMs: 1000 }),
      upstreams,
      tls,
      clock,
    });
    try {
      const r = await get(`${g.url}/proxy/s-a/lab?svc_cnx=cnx_x`, { ca });
      expect(r.status).toBe(401);
    } finally {
      await g.close();
    }
  });
});
