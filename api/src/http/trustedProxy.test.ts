// Behind a real reverse proxy (a separate Node process that appends X-Forwarded-For, as ingress
// controllers do), each client keeps its own address: one client's failed sign-ins lock out that client,
// not everyone behind the proxy, and a forged header — sent through the proxy or straight to the API —
// never borrows someone else's address. Clients are told apart by their loopback source addresses.
import { type ChildProcess, spawn } from "node:child_process";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type IdentityTestApi, startIdentityTestApi } from "../domain/identity/identity.test-support.ts";

const PROXY = `
const http = require("node:http");
const target = new URL(process.env.TARGET);
http.createServer((req, res) => {
  const xff = [req.headers["x-forwarded-for"], req.socket.remoteAddress].filter(Boolean).join(", ");
  const up = http.request({ host: target.hostname, port: target.port, localAddress: "127.0.0.1",
    method: req.method, path: req.url, headers: { ...req.headers, "x-forwarded-for": xff } }, (r) => {
    res.writeHead(r.statusCode, r.headers); r.pipe(res);
  });
  up.on("error", () => { res.writeHead(502); res.end(); });
  req.pipe(up);
}).listen(0, "127.0.0.1", function () { console.log(this.address().port); });
`;

let t: IdentityTestApi;
let proxy: ChildProcess;
let proxyPort: number;

beforeAll(async () => {
  t = await startIdentityTestApi({ env: { BERTH_TRUSTED_PROXY_CIDRS: "127.0.0.1/32" } });
  proxy = spawn(process.execPath, ["-e", PROXY], { env: { TARGET: t.api.url }, stdio: ["ignore", "pipe", "inherit"] });
  proxyPort = await new Promise<number>((resolve, reject) => {
    proxy.stdout?.once("data", (d: Buffer) => resolve(Number(d.toString().trim())));
    proxy.once("exit", (code) => reject(new Error(`the proxy exited (${code})`)));
  });
});

afterAll(async () => {
  proxy?.kill();
  await t?.stop();
});

/** A sign-in from `from` (a loopback source address), through the proxy or straight to the API. */
function signIn(
  from: string,
  email: string,
  password: string,
  opts: { via: "proxy" | "direct"; forwardedFor?: string },
): Promise<number> {
  const url = new URL(opts.via === "proxy" ? `http://127.0.0.1:${proxyPort}` : t.api.url);
  const body = JSON.stringify({ email, password });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        localAddress: from,
        method: "POST",
        path: "/api/v1/auth/login",
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          ...(opts.forwardedFor ? { "x-forwarded-for": opts.forwardedFor } : {}),
        },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const fail = async (from: string, email: string, via: "proxy" | "direct", forwardedFor?: string) => {
  // Five failures per account and source lock that pair (domain/identity/throttle.ts).
  for (let i = 0; i < 5; i++)
    expect(await signIn(from, email, "wrong password!", { via, ...(forwardedFor ? { forwardedFor } : {}) })).toBe(401);
};

describe("behind a trusted reverse proxy", () => {
  it("one client's failures do not lock out another client of the same proxy", async () => {
    const u = await t.aUser();
    await fail("127.0.0.2", u.email, "proxy");
    expect(await signIn("127.0.0.2", u.email, u.password, { via: "proxy" })).toBe(429);
    expect(await signIn("127.0.0.3", u.email, u.password, { via: "proxy" })).toBe(200);
  });

  it("a header a client forges through the proxy does not make it someone else", async () => {
    const u = await t.aUser();
    await fail("127.0.0.4", u.email, "proxy");
    // 127.0.0.4 claims to be 127.0.0.5: still locked, and 127.0.0.5 itself is not.
    expect(await signIn("127.0.0.4", u.email, u.password, { via: "proxy", forwardedFor: "127.0.0.5" })).toBe(429);
    expect(await signIn("127.0.0.5", u.email, u.password, { via: "proxy" })).toBe(200);
  });

  it("a forged header from a peer that is not a trusted proxy is ignored", async () => {
    const u = await t.aUser();
    // Straight to the API, pretending to be 127.0.0.7: the failures count against 127.0.0.6.
    await fail("127.0.0.6", u.email, "direct", "127.0.0.7");
    expect(await signIn("127.0.0.7", u.email, u.password, { via: "proxy" })).toBe(200);
    expect(await signIn("127.0.0.6", u.email, u.password, { via: "direct" })).toBe(429);
  });

  it("audit rows name the client the proxy forwarded, never the proxy nor a forged address", async () => {
    const u = await t.aUser();
    expect(await signIn("127.0.0.8", u.email, "wrong password!", { via: "proxy", forwardedFor: "127.0.0.9" })).toBe(
      401,
    );
    expect(await signIn("127.0.0.10", u.email, "wrong password!", { via: "direct", forwardedFor: "127.0.0.11" })).toBe(
      401,
    );
    const rows = await t.database
      .db("audit_log")
      .where({ action: "auth.login", outcome: "denied" })
      .whereIn("source_ip", ["127.0.0.8", "127.0.0.9", "127.0.0.10", "127.0.0.11", "127.0.0.1"])
      .orderBy("seq")
      .select("source_ip");
    expect(rows.map((r) => r.source_ip).slice(-2)).toEqual(["127.0.0.8", "127.0.0.10"]);
  });
});
