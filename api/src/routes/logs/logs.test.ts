// The logs route against a stub apiserver that serves pods/log as a real one does (plain text, tail,
// follow). The bed journey (e2e/src/connect) reads real kwok logs through a real apiserver.
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { HttpKube } from "@berth/controllers/kube";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../db/db.test-support.ts";
import type { Deps } from "../../deps.ts";
import { dbClusters } from "../../domain/connect/adapters.ts";
import { aPrincipal, aSession, FakeSessions } from "../../domain/connect/connect.test-support.ts";
import type { ConnectDeps } from "../../domain/connect/deps.ts";
import { openPodLog } from "../../domain/logs/podLog.ts";
import { fakeAuthenticator, startTestApi, type TestApi, testDeps } from "../../http/http.test-support.ts";
import { logsRoutes } from "./routes.ts";

let tdb: TestDatabase;
let api: TestApi;
let kube: Server;
let kubeUrl: string;
const seen: Array<{ path: string; auth?: string }> = [];
const followers = new Set<ServerResponse>();
const LINES = [
  "[standin] Jupyter Server stand-in is running",
  "[standin] serving /lab, /terminal and /code/",
  "[standin] websocket echo at /ws/echo",
];

const sessions = new FakeSessions([
  aSession("ses_a").named("ses-a").ownedBy("usr_alice"),
  aSession("ses_paused").ownedBy("usr_alice").paused(),
  aSession("ses_gone").named("ses-gone").ownedBy("usr_alice"),
]);
sessions.set("ses_a", { podName: "ses-a", namespace: "berth-sessions" });
sessions.set("ses_paused", { podName: undefined });
sessions.set("ses_gone", { podName: "ses-gone", namespace: "berth-sessions" });

beforeAll(async () => {
  tdb = await createTestDatabase();
  kube = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://kube");
    seen.push({ path: req.url ?? "", auth: req.headers.authorization });
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/log$/.exec(url.pathname);
    if (m?.[2] !== "ses-a") {
      res.writeHead(404, { "content-type": "application/json" }).end(
        JSON.stringify({
          kind: "Status",
          status: "Failure",
          message: `pods "${m?.[2]}" not found`,
          reason: "NotFound",
          code: 404,
        }),
      );
      return;
    }
    const tail = Number(url.searchParams.get("tailLines") ?? LINES.length);
    res.writeHead(200, { "content-type": "text/plain" });
    res.write(`${LINES.slice(-tail).join("\n")}\n`);
    if (url.searchParams.get("follow") === "true") {
      followers.add(res);
      res.on("close", () => followers.delete(res));
    } else res.end();
  });
  kube.listen(0, "127.0.0.1");
  await new Promise((r) => kube.once("listening", r));
  kubeUrl = `http://127.0.0.1:${(kube.address() as AddressInfo).port}`;
  const deps: Deps = testDeps({
    db: tdb.db,
    authenticate: fakeAuthenticator({ alice: aPrincipal("usr_alice"), bob: aPrincipal("usr_bob") }),
  });
  const portsOf = (d: Deps): ConnectDeps => ({ db: d.db, clock: d.clock, clusters: dbClusters(d), sessions });
  api = await startTestApi(
    deps,
    logsRoutes(portsOf, () => ({
      open: (_clusterId, r) => openPodLog(new HttpKube({ server: kubeUrl, token: "cluster-credential" }), r),
    })),
  );
});
afterAll(async () => {
  await api?.stop();
  kube?.closeAllConnections();
  kube?.close();
  await tdb?.drop();
});

describe("GET /api/v1/sessions/:id/logs", () => {
  it("answers the last lines of the pod's log, read with the cluster's credential", async () => {
    const r = await api.call("/api/v1/sessions/ses_a/logs?tail=2", { token: "alice" });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({
      session_id: "ses_a",
      cluster_id: "clu_a",
      pod: "ses-a",
      lines: LINES.slice(-2),
      truncated: false,
    });
    const call = seen.at(-1);
    expect(call?.auth).toBe("Bearer cluster-credential");
    expect(call?.path).toBe(
      "/api/v1/namespaces/berth-sessions/pods/ses-a/log?tailLines=2&follow=false&timestamps=false&limitBytes=1048576",
    );
  });

  it("follows: streams what the pod writes until the client leaves", async () => {
    const abort = new AbortController();
    const r = await api.call("/api/v1/sessions/ses_a/logs?follow=true&tail=1", {
      token: "alice",
      signal: abort.signal,
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    const dec = new TextDecoder();
    let text = "";
    const until = async (needle: string) => {
      while (!text.includes(needle)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${needle}`);
        text += dec.decode(value);
      }
    };
    await until("websocket echo");
    for (const f of followers) f.write("a new line\n");
    await until("a new line");
    abort.abort();
    await expect.poll(() => followers.size).toBe(0);
  });

  it("is 409 no_pod_log for a paused session and for a pod the cluster does not have", async () => {
    const paused = await api.call("/api/v1/sessions/ses_paused/logs", { token: "alice" });
    expect(paused.status).toBe(409);
    const gone = await api.call("/api/v1/sessions/ses_gone/logs", { token: "alice" });
    expect(gone.status).toBe(409);
    expect(((await gone.json()) as { error: { details: { reason: string } } }).error.details.reason).toBe("no_pod_log");
  });

  it("is 404 for another user's session and 400 for a bad tail", async () => {
    expect((await api.call("/api/v1/sessions/ses_a/logs", { token: "bob" })).status).toBe(404);
    expect((await api.call("/api/v1/sessions/ses_a/logs?tail=0", { token: "alice" })).status).toBe(400);
  });
});
