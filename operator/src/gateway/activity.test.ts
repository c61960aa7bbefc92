// What counts as a person using a session, at the gateway: the classifier's rules, the frame reader on
// split and masked frames, and a real gateway in front of the stand-in noting only what a person caused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type RunningStandin, startStandin } from "../standin/standin.ts";
import { ActivityReporter, ActivityTracker, FrameReader, isUserFrame, isUserRequest } from "./activity.ts";
import { cookieFrom, FakeVerifier, get } from "./gateway.test-support.ts";
import { type RunningGateway, startGateway } from "./gateway.ts";
import { selfSignedCertificate } from "./selfSigned.ts";
import { StaticUpstreams } from "./upstream.ts";

describe("telling a person's requests from the application's polling", () => {
  it.each([
    ["GET", { "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" }, true],
    ["GET", { "sec-fetch-mode": "cors", "sec-fetch-dest": "empty" }, false],
    ["GET", { "sec-fetch-mode": "same-origin" }, false],
    ["GET", { "sec-fetch-mode": "no-cors", "sec-fetch-dest": "script" }, false],
    ["GET", {}, true],
    ["POST", { "sec-fetch-mode": "cors" }, true],
    ["PUT", { "sec-fetch-mode": "cors" }, true],
    ["PATCH", {}, true],
    ["DELETE", { "sec-fetch-mode": "cors" }, true],
    ["HEAD", {}, false],
    ["OPTIONS", { "sec-fetch-mode": "cors" }, false],
  ])("%s with %j counts: %s", (method, headers, counts) => {
    expect(isUserRequest(method, headers)).toBe(counts);
  });

  it("counts data frames, not control frames, nor the kernel's automatic requests or Yjs awareness", () => {
    const k = "/proxy/s-a/api/kernels/k1/channels";
    const msg = (t: string) => Buffer.from(JSON.stringify({ header: { msg_type: t }, channel: "shell" }));
    expect(isUserFrame(k, 1, msg("execute_request"), false)).toBe(true);
    expect(isUserFrame(k, 1, msg("complete_request"), false)).toBe(true);
    expect(isUserFrame(k, 1, msg("kernel_info_request"), false)).toBe(false);
    expect(isUserFrame(k, 2, Buffer.concat([Buffer.alloc(8), msg("comm_info_request")]), false)).toBe(false);
    expect(isUserFrame(k, 9, Buffer.alloc(0), false)).toBe(false); // ping
    expect(isUserFrame(k, 10, Buffer.alloc(0), false)).toBe(false); // pong
    expect(isUserFrame(k, 8, Buffer.alloc(2), false)).toBe(false); // close
    expect(isUserFrame(k, 0, msg("execute_request"), false)).toBe(false); // continuation
    const room = "/proxy/s-a/api/collaboration/room/json:notebook:abc";
    expect(isUserFrame(room, 2, Buffer.from([1, 5, 0]), false)).toBe(false); // awareness
    expect(isUserFrame(room, 2, Buffer.from([0, 0, 1]), false)).toBe(false); // sync step 1
    expect(isUserFrame(room, 2, Buffer.from([0, 2, 9]), false)).toBe(true); // a document update
    expect(isUserFrame("/proxy/s-a/terminals/websocket/1", 1, Buffer.from('["stdin","l"]'), false)).toBe(true);
    expect(isUserFrame(k, 1, Buffer.from("??"), true)).toBe(true); // compressed: cannot tell, counts
  });
});

/** A client frame as a browser sends it: masked, with the length in 7, 16 or 64 bits. */
function clientFrame(opcode: number, payload: Buffer): Buffer {
  const mask = Buffer.from([0x12, 0x34, 0x56, 0x78]);
  const n = payload.length;
  const head =
    n < 126
      ? Buffer.from([0x80 | opcode, 0x80 | n])
      : n < 65536
        ? Buffer.from([0x80 | opcode, 0x80 | 126, n >> 8, n & 0xff])
        : Buffer.concat([
            Buffer.from([0x80 | opcode, 0x80 | 127]),
            Buffer.from(new BigUint64Array([BigInt(n)]).buffer).reverse(),
          ]);
  const body = Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] as number)));
  return Buffer.concat([head, mask, body]);
}

describe("the frame reader", () => {
  it("reads frames split at any byte, unmasks their start, and keeps up across lengths", () => {
    const big = Buffer.alloc(70_000, 0x61);
    const stream = Buffer.concat([
      clientFrame(1, Buffer.from('{"header":{"msg_type":"execute_request"}}')),
      clientFrame(9, Buffer.alloc(0)),
      clientFrame(2, Buffer.alloc(300, 7)),
      clientFrame(1, big),
      clientFrame(1, Buffer.from("last")),
    ]);
    for (const size of [1, 3, 7, 64, 1000, stream.length]) {
      const seen: { op: number; start: string; len: number }[] = [];
      const r = new FrameReader(
        (op, payload) => seen.push({ op, start: payload.subarray(0, 12).toString(), len: payload.length }),
        512,
      );
      for (let i = 0; i < stream.length; i += size) r.push(stream.subarray(i, i + size));
      expect(seen).toEqual([
        { op: 1, start: '{"header":{"', len: 41 },
        { op: 9, start: "", len: 0 },
        { op: 2, start: "\u0007".repeat(12), len: 300 },
        { op: 1, start: "aaaaaaaaaaaa", len: 512 },
        { op: 1, start: "last", len: 4 },
      ]);
    }
  });
});

describe("through a gateway", () => {
  const tls = selfSignedCertificate({ names: ["127.0.0.1"] });
  const clock = {
    t: Date.parse("2026-11-26T10:00:00Z"),
    now() {
      return this.t;
    },
  };
  const tracker = new ActivityTracker();
  const sent: unknown[] = [];
  let standin: RunningStandin;
  let gw: RunningGateway;
  let cookie: string;
  beforeAll(async () => {
    standin = await startStandin();
    const verifier = new FakeVerifier().session({
      sessionId: "ses_a",
      cr: "s-a",
      clusterId: "clu_a",
      ownerId: "usr_a",
      phase: "Running",
    });
    gw = await startGateway({
      clusterId: "clu_a",
      verifier,
      upstreams: new StaticUpstreams({ "s-a": `127.0.0.1:${standin.port}` }),
      tls,
      clock,
      cookieTtlSeconds: 3600,
      activity: { tracker },
    });
    const r = await get(`${gw.url}/proxy/s-a/lab?svc_cnx=${verifier.issue("t1", "ses_a", "usr_a")}`, {
      ca: tls.certPem,
    });
    cookie = cookieFrom(r) as string;
  });
  afterAll(async () => {
    await gw?.close();
    await standin?.close();
  });
  const at = (min: number) => new Date(Date.parse("2026-11-26T10:00:00Z") + min * 60_000).toISOString();

  it("notes following the link, navigation and writes, not background polling", async () => {
    expect(tracker.drain()).toEqual([{ session: "ses_a", user_active_at: at(0) }]);
    clock.t += 60_000;
    const poll = { cookie, "sec-fetch-mode": "cors", "sec-fetch-dest": "empty" };
    for (const p of ["api/kernels", "api/sessions", "api/terminals", "api/contents"])
      await get(`${gw.url}/proxy/s-a/${p}`, { ca: tls.certPem, headers: poll });
    expect(tracker.drain()).toEqual([]);
    clock.t += 60_000;
    await get(`${gw.url}/proxy/s-a/lab`, { ca: tls.certPem, headers: { cookie, "sec-fetch-mode": "navigate" } });
    expect(tracker.drain()).toEqual([{ session: "ses_a", user_active_at: at(2) }]);
    clock.t += 60_000;
    await get(`${gw.url}/proxy/s-a/api/echo`, {
      ca: tls.certPem,
      method: "PUT",
      body: "{}",
      headers: { ...poll, "content-type": "application/json" },
    });
    expect(tracker.drain()).toEqual([{ session: "ses_a", user_active_at: at(3) }]);
  });

  it("notes a kernel's execute_request over its WebSocket, not its automatic kernel_info_request nor pings", async () => {
    clock.t = Date.parse(at(10));
    const ws = new WebSocket(`${gw.url.replace("https", "wss")}/proxy/s-a/api/kernels/k-standin/channels`, {
      ca: tls.certPem,
      headers: { cookie },
    });
    await new Promise((r, j) => ws.once("open", r).once("error", j));
    const echo = () => new Promise((r) => ws.once("message", r));
    let e = echo();
    ws.send(JSON.stringify({ header: { msg_type: "kernel_info_request" }, channel: "shell" }));
    await e;
    ws.ping();
    await new Promise((r) => ws.once("pong", r));
    expect(tracker.drain()).toEqual([]);
    clock.t = Date.parse(at(11));
    e = echo();
    ws.send(JSON.stringify({ header: { msg_type: "execute_request" }, channel: "shell", content: { code: "1+1" } }));
    await e;
    expect(tracker.drain()).toEqual([{ session: "ses_a", user_active_at: at(11) }]);
    ws.close();
  });

  it("reports every interval, an empty list as the heartbeat, and keeps what a failed report could not send", async () => {
    let fail = true;
    const reporter = new ActivityReporter({
      clusterId: "clu_a",
      tracker,
      clock,
      client: {
        call: async (_m: string, path: string, body: unknown) => {
          sent.push({ path, body });
          return fail
            ? { ok: false as const, kind: "unavailable" as const, status: "503", message: "down" }
            : { ok: true as const, status: 200, body: {} };
        },
      },
    });
    tracker.touch("ses_a", Date.parse(at(20)));
    await reporter.report();
    fail = false;
    await reporter.report();
    await reporter.report();
    expect(sent).toEqual([
      {
        path: "/internal/v1/sessions/activity",
        body: {
          cluster_id: "clu_a",
          source: "gateway",
          observed_at: at(11),
          sessions: [{ session: "ses_a", user_active_at: at(20) }],
        },
      },
      {
        path: "/internal/v1/sessions/activity",
        body: {
          cluster_id: "clu_a",
          source: "gateway",
          observed_at: at(11),
          sessions: [{ session: "ses_a", user_active_at: at(20) }],
        },
      },
      {
        path: "/internal/v1/sessions/activity",
        body: { cluster_id: "clu_a", source: "gateway", observed_at: at(11), sessions: [] },
      },
    ]);
  });
});
