// HttpKube against a scripted apiserver on loopback: what only real sockets show.

import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  APPLY_PATCH,
  HttpKube,
  isStatus,
  KubeError,
  KubeTransportError,
  serverSideApply,
  type WatchEvent,
} from "./client.ts";
import { FakeApiserver, until } from "./fake-apiserver.test-support.ts";

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.reverse()) await f();
  cleanup = [];
});

async function setUp(opts: ConstructorParameters<typeof HttpKube>[1] = {}) {
  const api = new FakeApiserver();
  await api.start();
  const kube = new HttpKube(api.kubeConfig(), opts);
  cleanup.push(async () => {
    kube.close();
    await api.stop();
  });
  return { api, kube };
}

describe("HttpKube", () => {
  it("a request the apiserver never answers fails after the client's timeout", async () => {
    const { api, kube } = await setUp({ requestTimeoutMs: 100 });
    api.silent.add("/api/v1/hung");
    const started = Date.now();
    await expect(kube.request("GET", "/api/v1/hung")).rejects.toThrow(/timed out after 100 ms/);
    // The client's own timer fired, not the 30 s default (a generous bound: CI machines are busy).
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("a request's own timeout overrides the client's", async () => {
    const { api, kube } = await setUp({ requestTimeoutMs: 60_000 });
    api.silent.add("/api/v1/hung");
    await expect(kube.request("GET", "/api/v1/hung", { timeoutMs: 50 })).rejects.toThrow(/timed out after 50 ms/);
  });

  it("sends the configured user agent", async () => {
    const { api, kube } = await setUp({ userAgent: "berth-operator" });
    await kube.json("GET", "/api/v1/things");
    expect(api.requests[0]?.userAgent).toBe("berth-operator");
  });

  it("close() lets go of the kept-alive connections, and a later request opens a new one", async () => {
    const { api, kube } = await setUp();
    // The server keeps idle sockets far longer than we wait, so only our close can end this one.
    api.server.keepAliveTimeout = 60_000;
    await kube.json("GET", "/api/v1/things");
    expect(await api.connections()).toBe(1); // kept alive
    kube.close();
    await until(async () => (await api.connections()) === 0, "the connection closed", 10_000);
    await kube.json("GET", "/api/v1/things");
    expect(api.lists).toBe(2);
  });

  it("a watch ends with the error its handler throws", async () => {
    const { api, kube } = await setUp();
    const watching = kube.watch(
      "/api/v1/things",
      {},
      (e: WatchEvent) => {
        if (e.type === "ERROR") throw Object.assign(new Error("expired"), { code: 410 });
      },
      { idleTimeoutMs: 5_000 },
    );
    await until(() => api.open !== undefined, "a watch");
    api.event("ERROR", { kind: "Status", code: 410 });
    await expect(watching).rejects.toThrow("expired");
  });

  it("a watch the apiserver refuses rejects with its status", async () => {
    const { api, kube } = await setUp();
    api.plan = ["410-status"];
    const err = await kube.watch("/api/v1/things", {}, () => {}, { idleTimeoutMs: 5_000 }).catch((e: unknown) => e);
    expect(isStatus(err, 410)).toBe(true);
  });

  it("a watch's connection is not kept alive after it ends", async () => {
    const { api, kube } = await setUp();
    // The server keeps idle sockets far longer than we wait: a pooled socket would still be open at the end.
    api.server.keepAliveTimeout = 60_000;
    const watching = kube.watch("/api/v1/things", {}, () => {}, { idleTimeoutMs: 5_000 });
    await until(() => api.open !== undefined, "a watch");
    api.open?.end();
    await watching;
    await until(async () => (await api.connections()) === 0, "the watch's connection closed", 10_000);
  });

  it("built from a stored credential, it sends the credential's bearer token", async () => {
    const api = new FakeApiserver();
    await api.start();
    const kube = new HttpKube({ server: api.url, token: "the-token" });
    cleanup.push(async () => {
      kube.close();
      await api.stop();
    });
    await kube.json("GET", "/api/v1/things");
    expect(api.requests[0]?.authorization).toBe("Bearer the-token");
  });

  it("server-side apply is a PATCH of the whole object as its field manager, forced where asked", async () => {
    const { api, kube } = await setUp();
    api.answers.set("/apis/x/v1/things/a", { status: 201, body: "{}" });
    const res = await serverSideApply(
      kube,
      "/apis/x/v1/things/a",
      { apiVersion: "x/v1", kind: "Thing", metadata: { name: "a" } },
      { fieldManager: "berth-worker", force: true },
    );
    expect(res.status).toBe(201);
    expect(api.requests[0]).toMatchObject({ method: "PATCH", contentType: APPLY_PATCH });
    expect(new URL(api.requests[0]?.url ?? "", "http://x").searchParams.toString()).toBe(
      "fieldManager=berth-worker&force=true",
    );
  });

  it("an API refusal is a KubeError with the Status's reason and message", async () => {
    const { api, kube } = await setUp();
    api.answers.set("/api/v1/nodes/n", {
      status: 404,
      body: JSON.stringify({ kind: "Status", code: 404, reason: "NotFound", message: 'nodes "n" not found' }),
    });
    const err = await kube.json("DELETE", "/api/v1/nodes/n").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeError);
    expect(err).toMatchObject({ status: 404, reason: "NotFound", statusMessage: 'nodes "n" not found' });
  });

  it("a refused connection is a transport failure that names the socket's code", async () => {
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    const kube = new HttpKube({ server: `http://127.0.0.1:${port}` });
    cleanup.push(async () => kube.close());
    const err = await kube.request("GET", "/version").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeTransportError);
    expect(err).toMatchObject({ reason: "ECONNREFUSED", code: "ECONNREFUSED" });
    expect((err as Error).message).toMatch(new RegExp(`^GET 127.0.0.1:${port}/version: `));
  });

  it("a caller's deadline that passes is a transport failure with reason TIMEOUT", async () => {
    const { api, kube } = await setUp();
    api.silent.add("/api/v1/hung");
    const err = await kube.request("GET", "/api/v1/hung", { signal: AbortSignal.timeout(50) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeTransportError);
    expect(err).toMatchObject({ reason: "TIMEOUT" });
    expect((err as Error).message).toMatch(/: no answer before the deadline$/);
  });

  it("a stream hands over a 200 answer as it comes, and rejects another answer with its status", async () => {
    const { api, kube } = await setUp();
    api.answers.set("/api/v1/namespaces/ns/pods/p/log", { status: 200, body: "one\ntwo\n", contentType: "text/plain" });
    api.answers.set("/api/v1/namespaces/ns/pods/gone/log", {
      status: 404,
      body: JSON.stringify({ kind: "Status", code: 404, message: 'pods "gone" not found' }),
    });
    const stream = await kube.stream("/api/v1/namespaces/ns/pods/p/log", { query: { follow: false } });
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString("utf8")).toBe("one\ntwo\n");
    const err = await kube.stream("/api/v1/namespaces/ns/pods/gone/log").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeError);
    expect(err).toMatchObject({ status: 404, statusMessage: 'pods "gone" not found' });
  });

  it("a stream the caller gives up on before an answer is a transport failure with reason ABORTED", async () => {
    const { api, kube } = await setUp();
    api.silent.add("/api/v1/hung");
    const abort = new AbortController();
    const opening = kube.stream("/api/v1/hung", { signal: abort.signal }).catch((e: unknown) => e);
    await until(() => api.requests.length > 0, "the request");
    abort.abort();
    expect(await opening).toMatchObject({ reason: "ABORTED" });
  });
});
