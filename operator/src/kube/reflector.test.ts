// The reflector against a scripted apiserver on loopback: what it does on 410 (both forms), on a cut
// connection and on a server-side end of the watch, without waiting for a real etcd to compact.
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";
import { captureLog } from "../testing/log.ts";
import { KubeClient } from "./client.ts";
import { Reflector } from "./reflector.ts";

interface Obj {
  metadata: { name: string; resourceVersion: string };
  spec: { v: number };
}

class FakeApiserver {
  items = new Map<string, Obj>();
  rv = 100;
  lists = 0;
  watches: URLSearchParams[] = [];
  open: ServerResponse | undefined;
  /** How the next watches answer; an empty plan keeps the stream open. */
  plan: ("stream" | "410-status")[] = [];
  server: Server;
  url = "";

  constructor() {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      if (url.searchParams.get("watch") !== "true") {
        this.lists++;
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ metadata: { resourceVersion: String(this.rv) }, items: [...this.items.values()] }));
        return;
      }
      this.watches.push(url.searchParams);
      const step = this.plan.shift() ?? "stream";
      if (step === "410-status") {
        res.writeHead(410, { "content-type": "application/json" });
        res.end(JSON.stringify({ kind: "Status", code: 410, reason: "Expired", message: "too old resource version" }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
      res.flushHeaders();
      this.open = res;
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  set(name: string, v: number): Obj {
    const o = { metadata: { name, resourceVersion: String(++this.rv) }, spec: { v } };
    this.items.set(name, o);
    return o;
  }

  event(type: string, object: unknown): void {
    this.open?.write(`${JSON.stringify({ type, object })}\n`);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.reverse()) await f();
  cleanup = [];
});

async function setUp() {
  const api = new FakeApiserver();
  await api.start();
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: "fake", server: api.url, skipTLSVerify: true }, { name: "u", token: "t" });
  const client = new KubeClient(kc);
  let changes = 0;
  const relists: string[] = [];
  const reflector = new Reflector<{ name: string; v: number }>({
    client,
    path: "/api/v1/things",
    resource: "things",
    transform: (o: Obj) => ({ name: o.metadata.name, v: o.spec.v }),
    onChange: () => changes++,
    onRelist: (reason) => relists.push(reason),
    log: captureLog("silent").log,
    backoff: { baseMs: 10, maxMs: 50, jitter: 0 },
    pageSize: 100,
  });
  cleanup.push(async () => {
    await reflector.stop();
    client.close();
    await api.stop();
  });
  const values = () => [...reflector.values()].sort((a, b) => a.name.localeCompare(b.name));
  return { api, reflector, values, changes: () => changes, relists };
}

describe("Reflector", () => {
  it("lists, then watches from the list's resourceVersion and follows events", async () => {
    const { api, reflector, values, changes } = await setUp();
    api.set("a", 1);
    reflector.start();
    await until(() => api.open !== undefined, "a watch");
    expect(api.watches[0]?.get("resourceVersion")).toBe("101");
    expect(values()).toEqual([{ name: "a", v: 1 }]);
    expect(reflector.synced).toBe(true);
    api.event("ADDED", api.set("b", 2));
    api.event("MODIFIED", api.set("a", 3));
    await until(() => values().length === 2 && values()[0]?.v === 3, "events applied");
    expect(changes()).toBe(3); // the list, b, a
  });

  it("an update whose projection is unchanged wakes nobody", async () => {
    const { api, reflector, changes } = await setUp();
    api.set("a", 1);
    reflector.start();
    await until(() => api.open !== undefined, "a watch");
    api.event("MODIFIED", api.set("a", 1)); // new resourceVersion, same projection
    api.event("BOOKMARK", { metadata: { resourceVersion: "500" } });
    api.event("MODIFIED", api.set("a", 2));
    await until(() => changes() === 2, "the second change");
    expect(changes()).toBe(2);
  });

  it("an ERROR event with code 410 makes it relist and the store follows the new list", async () => {
    const { api, reflector, values, relists } = await setUp();
    api.set("a", 1);
    reflector.start();
    await until(() => api.open !== undefined, "a watch");
    const first = api.open;
    api.items.delete("a");
    api.set("c", 9);
    api.event("ERROR", {
      kind: "Status",
      code: 410,
      reason: "Expired",
      message: "too old resource version: 101 (150)",
    });
    first?.end();
    await until(() => api.lists === 2 && api.open !== first, "a relist and a new watch");
    expect(values()).toEqual([{ name: "c", v: 9 }]);
    expect(relists).toEqual(["initial", "expired"]);
  });

  it("a watch refused with HTTP 410 makes it relist", async () => {
    const { api, reflector, relists } = await setUp();
    api.plan = ["410-status"];
    reflector.start();
    await until(() => api.lists === 2 && api.open !== undefined, "a relist and a watch");
    expect(relists).toEqual(["initial", "expired"]);
  });

  it("a cut connection is resumed from the last resourceVersion seen, without a relist", async () => {
    const { api, reflector, values } = await setUp();
    reflector.start();
    await until(() => api.open !== undefined, "a watch");
    api.event("ADDED", api.set("a", 1));
    await until(() => values().length === 1, "the event");
    const first = api.open;
    first?.socket?.destroy();
    await until(() => api.watches.length === 2, "a second watch");
    expect(api.watches[1]?.get("resourceVersion")).toBe(String(api.rv));
    expect(api.lists).toBe(1);
    await until(() => reflector.synced, "synced again");
  });

  it("a watch the server ends is resumed at once", async () => {
    const { api, reflector } = await setUp();
    reflector.start();
    await until(() => api.open !== undefined, "a watch");
    api.open?.end();
    await until(() => api.watches.length === 2, "a second watch");
    expect(api.lists).toBe(1);
  });
});
