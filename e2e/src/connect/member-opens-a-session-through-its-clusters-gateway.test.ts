// A user opens a running session in the browser through its own cluster's gateway: the API hands out
// links on that cluster's session domain, the gateway redeems the single-use token with the control
// plane (operator token of that cluster), sets its cookie and proxies HTTP and WebSocket traffic to the
// session's application (the stand-in); logs come from the cluster's Kubernetes API and usage from the
// operator's samples.

import type { TestUser } from "@berth/api/testing";
import type { ResponseOf } from "@berth/console/client";
import { cookieFrom, get, type SimpleResponse } from "@berth/operator/gateway/testing";
import { STANDIN_LOG_LINES } from "@berth/operator/standin";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { bedApi, refusalOf } from "../console/api-client.ts";
import { type ConnectBed, startConnectBed } from "./harness.ts";

let bed: ConnectBed;
let alice: TestUser;
let bob: TestUser;
const S = {
  a: "ses_aaaaaaaaaaaaaaaaaaaa",
  b: "ses_bbbbbbbbbbbbbbbbbbbb",
  bobs: "ses_bobbobbobbobbobbobb",
  onB: "ses_onbonbonbonbonbonb",
  paused: "ses_pausedpausedpaused",
};

beforeAll(async () => {
  bed = await startConnectBed();
  [alice, bob] = await Promise.all([bed.t.aUser(), bed.t.aUser()]);
  await Promise.all([
    bed.runningSession({ id: S.a, owner: alice, cluster: "gpu-a" }),
    bed.runningSession({ id: S.b, owner: alice, cluster: "gpu-a" }),
    bed.runningSession({ id: S.bobs, owner: bob, cluster: "gpu-a" }),
    bed.runningSession({ id: S.onB, owner: alice, cluster: "gpu-b" }),
    bed.runningSession({ id: S.paused, owner: alice, cluster: "gpu-a" }),
  ]);
  await bed.pause(S.paused);
});

afterAll(async () => {
  await bed?.stop();
});

function linksFor(id: string, user: TestUser): Promise<ResponseOf<"getSessionConnectLinks">> {
  return bedApi(bed, user).call("getSessionConnectLinks", { params: { sessionId: id } });
}

const caOf = (url: string) =>
  new URL(url).port === String(bed.gpu["gpu-b"].gateway.port) ? bed.ca["gpu-b"] : bed.ca["gpu-a"];
const open = (url: string, headers: Record<string, string> = {}): Promise<SimpleResponse> =>
  get(url, { ca: caOf(url), headers });

/** Follows the link as a browser would: the 303 sets the cookie, the redirect lands on the application. */
async function signIn(link: string): Promise<{ cookie: string; landing: SimpleResponse }> {
  const first = await open(link);
  expect(first.status, first.body).toBe(303);
  const cookie = cookieFrom(first) as string;
  const url = new URL(first.headers.location as string, link).toString();
  expect(url).not.toContain("svc_cnx");
  return { cookie, landing: await open(url, { cookie }) };
}

function ws(url: string, cookie?: string): Promise<{ socket?: WebSocket; status?: number }> {
  return new Promise((resolve) => {
    const u = new URL(url);
    const s = new WebSocket(url.replace(/^https/, "wss"), {
      ca: caOf(url),
      headers: { ...(cookie ? { cookie } : {}), origin: `https://${u.host}` },
    });
    s.once("open", () => resolve({ socket: s }));
    s.once("unexpected-response", (_q, res) => resolve({ status: res.statusCode }));
    s.once("error", () => resolve({}));
  });
}

describe("connect links", () => {
  it("are on the session's own cluster's gateway host, one per application", async () => {
    const a = await linksFor(S.a, alice);
    expect(a.session_domain).toBe(bed.gpu["gpu-a"].sessionDomain);
    expect(new URL(a.links.lab).host).toBe(bed.gpu["gpu-a"].sessionDomain);
    expect(new URL(a.links.lab).pathname).toBe(`/proxy/${S.a.replace("_", "-")}/lab`);
    expect(new URL(a.links.terminal).pathname).toBe(`/proxy/${S.a.replace("_", "-")}/terminal`);
    expect(new URL(a.links.code).pathname).toBe(`/proxy/${S.a.replace("_", "-")}/code/`);
    const b = await linksFor(S.onB, alice);
    expect(new URL(b.links.lab).host).toBe(bed.gpu["gpu-b"].sessionDomain);
  });

  it("are refused for a paused session, and for another member's session", async () => {
    const paused = await refusalOf(linksFor(S.paused, alice));
    expect(paused.status).toBe(409);
    expect(paused.details).toMatchObject({ reason: "session_not_running", phase: "Paused" });
    expect((await refusalOf(linksFor(S.a, bob))).status).toBe(404);
  });
});

describe("opening a link", () => {
  it("lands on the application, and the cookie then carries HTTP and a WebSocket", async () => {
    const links = await linksFor(S.a, alice);
    const { cookie, landing } = await signIn(links.links.lab);
    expect(landing.status).toBe(200);
    expect(landing.body).toContain("<h1>JupyterLab</h1>");
    for (const [kind, title] of [
      ["terminal", "Terminal"],
      ["code", "Code editor"],
    ] as const) {
      const page = await open(links.links[kind].replace(/\?.*$/, ""), { cookie });
      expect(page.body).toContain(`<h1>${title}</h1>`);
    }
    const { socket } = await ws(`https://${links.session_domain}/proxy/${S.a.replace("_", "-")}/ws/echo`, cookie);
    expect(socket).toBeDefined();
    const echoed = new Promise<string>((r) => socket?.once("message", (d) => r(String(d))));
    socket?.send("kernel message");
    expect(await echoed).toBe("kernel message");
    socket?.close();
  });

  it("works once: of 100 parallel openings of one link exactly one gets in", async () => {
    const { lab } = (await linksFor(S.a, alice)).links;
    const results = await Promise.all(Array.from({ length: 100 }, () => open(lab)));
    expect(results.filter((r) => r.status === 303)).toHaveLength(1);
    const refused = results.filter((r) => r.status === 403);
    expect(refused).toHaveLength(99);
    expect(refused.every((r) => r.headers["x-berth-gateway"] === "token_used")).toBe(true);
  });

  it("does not let another member in: not with their cookie, not with their link", async () => {
    const bobsLinks = await linksFor(S.bobs, bob);
    const { cookie: bobsCookie } = await signIn(bobsLinks.links.lab);
    const alicesLab = `https://${bed.gpu["gpu-a"].sessionDomain}/proxy/${S.a.replace("_", "-")}/lab`;
    expect((await open(alicesLab, { cookie: bobsCookie })).status).toBe(401);
    expect(
      (await ws(`https://${bed.gpu["gpu-a"].sessionDomain}/proxy/${S.a.replace("_", "-")}/ws/echo`, bobsCookie)).status,
    ).toBe(401);
    // Bob's fresh link, pointed at Alice's session: refused, and it says why.
    const token = new URL((await linksFor(S.bobs, bob)).links.lab).searchParams.get("svc_cnx");
    const r = await open(`${alicesLab}?svc_cnx=${token}`);
    expect(r.status).toBe(403);
    expect(r.headers["x-berth-gateway"]).toBe("other_session");
  });

  it("does not open session B with a link for session A", async () => {
    const token = new URL((await linksFor(S.a, alice)).links.lab).searchParams.get("svc_cnx");
    const r = await open(
      `https://${bed.gpu["gpu-a"].sessionDomain}/proxy/${S.b.replace("_", "-")}/lab?svc_cnx=${token}`,
    );
    expect(r.status).toBe(403);
    expect(r.body).toContain("This link is for another session");
  });

  it("does not open a session at another cluster's gateway", async () => {
    const link = new URL((await linksFor(S.onB, alice)).links.lab);
    const r = await open(`https://${bed.gpu["gpu-a"].sessionDomain}${link.pathname}${link.search}`);
    expect(r.status).toBe(403);
    expect(r.headers["x-berth-gateway"]).toBe("other_cluster");
  });

  it("refuses an expired link clearly", async () => {
    const { lab } = (await linksFor(S.a, alice)).links;
    bed.t.clock.advance(61);
    try {
      const r = await open(lab);
      expect(r.status).toBe(403);
      expect(r.headers["x-berth-gateway"]).toBe("token_expired");
      expect(r.body).toContain("This link has expired");
    } finally {
      bed.t.clock.advance(-61);
    }
  });

  it("shows a paused session as paused, to a link minted before the pause and to a cookie", async () => {
    const id = "ses_pausesoonpausesoon";
    await bed.runningSession({ id, owner: alice, cluster: "gpu-a" });
    const { links } = await linksFor(id, alice);
    const { cookie } = await signIn(links.lab);
    await bed.pause(id);
    const withLink = await open(links.terminal);
    expect(withLink.status).toBe(409);
    expect(withLink.body).toContain("This session is paused");
    // The gate may answer from its cache (200 ms) for a moment: asked until it tells, within a bound.
    const withCookieNow = () => open(links.lab.replace(/\?.*$/, ""), { cookie });
    let withCookie = await withCookieNow();
    for (const deadline = Date.now() + 5_000; withCookie.status !== 409 && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 20));
      withCookie = await withCookieNow();
    }
    expect(withCookie.status).toBe(409);
    expect(withCookie.headers["x-berth-gateway"]).toBe("session_paused");
  });

  it("answers 401 when the gateway cannot reach the control plane", async () => {
    const isolated = await bed.isolatedGateway("gpu-a", "http://127.0.0.1:9");
    const link = new URL((await linksFor(S.a, alice)).links.lab);
    const started = Date.now();
    const r = await get(`${isolated.url}${link.pathname}${link.search}`, { ca: bed.ca["gpu-a"] });
    expect(r.status).toBe(401);
    expect(r.headers["x-berth-gateway"]).toBe("verification_unavailable");
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe("logs", () => {
  const logsOf = (user: TestUser, sessionId: string, tail?: number) =>
    bedApi(bed, user).call("getSessionLogs", { params: { sessionId }, query: tail === undefined ? {} : { tail } });

  it("show what the session's pod logs, read through its cluster's API", async () => {
    const r = await logsOf(alice, S.a, 100);
    expect(r.lines).toEqual(STANDIN_LOG_LINES);
    expect(r.cluster_id).toBe(bed.gpu["gpu-a"].clusterId);
    const tail = await logsOf(alice, S.onB, 1);
    expect(tail.lines).toEqual(STANDIN_LOG_LINES.slice(-1));
  });

  it("follow as a stream", async () => {
    const abort = new AbortController();
    const res = await fetch(`${bed.t.api.url}/api/v1/sessions/${S.a}/logs?follow=true&tail=100`, {
      headers: { authorization: `Bearer ${alice.token}` },
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    while (!text.includes(STANDIN_LOG_LINES.at(-1) as string)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    abort.abort();
    expect(text.trim().split("\n")).toEqual(STANDIN_LOG_LINES);
  });

  it("are refused for a paused session and hidden from another member", async () => {
    expect((await refusalOf(logsOf(alice, S.paused))).status).toBe(409);
    expect((await refusalOf(logsOf(bob, S.a))).status).toBe(404);
  });
});

describe("live usage", () => {
  const batch = (cluster: string, session: string, n: number, prefix: string) => ({
    cluster_id: cluster,
    samples: Array.from({ length: n }, (_, i) => ({
      id: `${prefix}-${i}`,
      session,
      start: new Date(Date.UTC(2026, 10, 22, 10, 0, i * 10)).toISOString(),
      end: new Date(Date.UTC(2026, 10, 22, 10, 0, i * 10 + 10)).toISOString(),
      gpu_seconds: 10,
      gpu_utilization: 40 + i,
      gpu_memory_mib: 2048,
    })),
  });
  const report = (token: string, body: unknown) =>
    fetch(`${bed.plane.url}/internal/v1/usage`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  it("counts a batch sent twice once", async () => {
    const a = bed.gpu["gpu-a"];
    const body = batch(a.clusterId, S.a, 6, "a-usage");
    const first = await report(a.operatorToken, body);
    expect(await first.json()).toEqual({ accepted: 6, duplicates: 0 });
    const again = await report(a.operatorToken, body);
    expect(await again.json()).toEqual({ accepted: 0, duplicates: 6 });
    const u = await bedApi(bed, alice).call("getSessionUsage", { params: { sessionId: S.a }, query: { points: 3 } });
    expect(u.totals).toMatchObject({ samples: 6, gpu_seconds: 60 });
    expect(u.latest).toMatchObject({ gpu_seconds: 10, gpu_utilization: 45, gpu_memory_mib: 2048 });
    expect(u.series.map((p) => p.gpu_utilization)).toEqual([43, 44, 45]);
  });

  it("refuses a batch that names another cluster, and writes nothing", async () => {
    const a = bed.gpu["gpu-a"];
    const b = bed.gpu["gpu-b"];
    const r = await report(a.operatorToken, batch(b.clusterId, S.onB, 3, "foreign"));
    expect(r.status).toBe(403);
    expect(await bed.t.database.db("usage_samples").where("sample_id", "like", "foreign-%")).toHaveLength(0);
  });

  it("refuses a batch that names another cluster's session, and writes nothing", async () => {
    const a = bed.gpu["gpu-a"];
    const mixed = batch(a.clusterId, S.a, 2, "mixed");
    mixed.samples.push({
      ...(batch(a.clusterId, S.onB, 1, "mixed-foreign").samples[0] as (typeof mixed.samples)[number]),
    });
    const r = await report(a.operatorToken, mixed);
    expect(r.status).toBe(403);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe("forbidden");
    expect(await bed.t.database.db("usage_samples").where("sample_id", "like", "mixed%")).toHaveLength(0);
  });
});
