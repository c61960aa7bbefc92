// HttpKube against a scripted apiserver on loopback: what only real sockets show.
import { afterEach, describe, expect, it } from "vitest";
import { HttpKube, isStatus, type WatchEvent } from "./client.ts";
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
});
