import { afterEach, describe, expect, it } from "vitest";
import { HttpKube, type KubeApi, type KubeResponse, type RequestOptions, type WatchEvent } from "./client.ts";
import { until as eventually, FakeApiserver, type Thing } from "./fake-apiserver.test-support.ts";
import { Informer, type InformerEvent, type KubeObject } from "./informer.ts";

const obj = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: "ns", resourceVersion: rv } });

/** A scripted apiserver: lists answer from `items`; each watch plays the next script and ends. */
class FakeKube implements KubeApi {
  readonly server = "https://fake";
  items: KubeObject[] = [];
  listRv = "10";
  lists = 0;
  watches: (RequestOptions["query"] | undefined)[] = [];
  scripts: ((emit: (e: WatchEvent) => void) => Promise<void>)[] = [];
  async request<T>(method: string, _path: string): Promise<KubeResponse<T>> {
    if (method !== "GET") throw new Error("read-only fake");
    this.lists++;
    return { status: 200, body: { metadata: { resourceVersion: this.listRv }, items: this.items } as T };
  }
  async json<T>(method: string, path: string): Promise<T> {
    return (await this.request<T>(method, path)).body;
  }
  async watch(
    _path: string,
    query: RequestOptions["query"],
    onEvent: (e: WatchEvent) => void,
    opts: { signal?: AbortSignal },
  ): Promise<void> {
    this.watches.push(query);
    const script = this.scripts.shift();
    // No script: the watch stays open until the informer stops.
    const open = new Promise<void>((r) => opts.signal?.addEventListener("abort", () => r(), { once: true }));
    if (!script) return open;
    await Promise.race([script(onEvent), open]);
  }
}

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(cond()).toBe(true);
};

describe("the informer", () => {
  it("resumes a watch the server ended from the last resourceVersion it saw", async () => {
    const kube = new FakeKube();
    kube.items = [obj("a", "5")];
    kube.scripts.push(async (emit) => emit({ type: "ADDED", object: obj("b", "11") }));
    const inf = new Informer({ kube, path: "/x", onEvent: () => {} });
    inf.start();
    await until(() => kube.watches.length === 2);
    expect(kube.watches.map((q) => q?.resourceVersion)).toEqual(["10", "11"]);
    expect([...inf.store.keys()].sort()).toEqual(["ns/a", "ns/b"]);
    expect(kube.lists).toBe(1);
    await inf.stop();
  });

  it("relists after 410 Gone and reports what vanished meanwhile as deleted", async () => {
    const kube = new FakeKube();
    kube.items = [obj("a", "5"), obj("b", "6")];
    kube.scripts.push(async (emit) => emit({ type: "ERROR", object: { code: 410, reason: "Expired" } }));
    const deleted: string[] = [];
    const inf = new Informer({ kube, path: "/x", onEvent: (e) => e.type === "delete" && deleted.push(e.key) });
    inf.start();
    await until(() => kube.lists === 1);
    kube.items = [obj("a", "20")];
    kube.listRv = "21";
    await until(() => kube.lists === 2 && kube.watches.length === 2);
    expect(deleted).toEqual(["ns/b"]);
    expect(inf.store.get("ns/a")?.metadata.resourceVersion).toBe("20");
    expect(kube.watches[1]?.resourceVersion).toBe("21");
    await inf.stop();
  });

  /** An informer that has listed (at resourceVersion 10) and holds its watch open; `emit` sends it events. */
  async function listedAndWatching(items: KubeObject[], onEvent: (e: InformerEvent<KubeObject>) => void = () => {}) {
    const kube = new FakeKube();
    kube.items = items;
    let emit: ((e: WatchEvent) => void) | undefined;
    kube.scripts.push((e) => {
      emit = e;
      return new Promise(() => {});
    });
    const inf = new Informer({ kube, path: "/x", onEvent });
    inf.start();
    await until(() => emit !== undefined);
    return { inf, emit: (e: WatchEvent) => emit?.(e) };
  }

  it("keeps a write's answer over an older version that the watch brings later", async () => {
    const { inf, emit } = await listedAndWatching([obj("a", "5")]);
    inf.observe(obj("a", "19"));
    emit({ type: "MODIFIED", object: obj("a", "17") });
    expect(inf.store.get("ns/a")?.metadata.resourceVersion).toBe("19");
    await inf.stop();
  });

  it("drops a write's answer that the watch has gone past: a deletion seen first stays a deletion", async () => {
    const deleted: string[] = [];
    const { inf, emit } = await listedAndWatching([obj("a", "5"), obj("b", "6")], (e) => {
      if (e.type === "delete") deleted.push(e.key);
    });
    // The controller wrote "a" (answered at 11) while someone deleted it (12); the deletion came first.
    emit({ type: "DELETED", object: obj("a", "12") });
    inf.observe(obj("a", "11"));
    expect(inf.store.has("ns/a")).toBe(false);
    expect(deleted).toEqual(["ns/a"]);
    // An answer newer than anything watched still goes in at once.
    inf.observe(obj("b", "13"));
    expect(inf.store.get("ns/b")?.metadata.resourceVersion).toBe("13");
    await inf.stop();
  });

  it("says it has passed a resourceVersion at or below its position, comparing integers only", async () => {
    expect(new Informer({ kube: new FakeKube(), path: "/x", onEvent: () => {} }).passed("1")).toBe(false);
    const { inf, emit } = await listedAndWatching([obj("a", "5")]);
    expect([inf.passed("9"), inf.passed("10"), inf.passed("11")]).toEqual([true, true, false]);
    emit({ type: "BOOKMARK", object: { metadata: { resourceVersion: "20" } } as never });
    expect(inf.passed("19")).toBe(true);
    expect(inf.passed("abc")).toBe(false);
    await inf.stop();
  });
});

describe("the informer over HTTP", () => {
  let cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const f of cleanup.reverse()) await f();
    cleanup = [];
  });

  /** An informer keeping a projection ({ name, v }) of each thing, as the operator's inventory does. */
  async function setUp() {
    const api = new FakeApiserver();
    await api.start();
    const kube = new HttpKube(api.kubeConfig());
    const events: string[] = [];
    const relists: string[] = [];
    const informer = new Informer<{ name: string; v: number }>({
      kube,
      path: "/api/v1/things",
      parse: (o) => {
        const t = o as unknown as Thing;
        // Things with v < 0 are not kept.
        return t.spec.v < 0 ? undefined : { name: t.metadata.name, v: t.spec.v };
      },
      unchanged: (a, b) => JSON.stringify(a) === JSON.stringify(b),
      onEvent: (e) => events.push(`${e.type} ${e.key}`),
      onRelist: (reason) => relists.push(reason),
      retryDelay: () => 10,
    });
    cleanup.push(async () => {
      await informer.stop();
      kube.close();
      await api.stop();
    });
    const values = () => [...informer.store.values()].sort((a, b) => a.name.localeCompare(b.name));
    return { api, informer, values, events: () => events.length, log: events, relists };
  }

  it("lists, then watches from the list's resourceVersion and follows events", async () => {
    const { api, informer, values, events } = await setUp();
    api.set("a", 1);
    informer.start();
    await eventually(() => api.open !== undefined, "a watch");
    expect(api.watches[0]?.get("resourceVersion")).toBe("101");
    expect(values()).toEqual([{ name: "a", v: 1 }]);
    expect(informer.synced).toBe(true);
    expect(informer.watching).toBe(true);
    api.event("ADDED", api.set("b", 2));
    api.event("MODIFIED", api.set("a", 3));
    await eventually(() => values().length === 2 && values()[0]?.v === 3, "events applied");
    expect(events()).toBe(3); // the list's a, then b, then a
  });

  it("an update whose projection is unchanged wakes nobody", async () => {
    const { api, informer, events } = await setUp();
    api.set("a", 1);
    informer.start();
    await eventually(() => api.open !== undefined, "a watch");
    api.event("MODIFIED", api.set("a", 1)); // new resourceVersion, same projection
    api.event("BOOKMARK", { metadata: { resourceVersion: "500" } });
    api.event("MODIFIED", api.set("a", 2));
    await eventually(() => events() === 2, "the second change");
    expect(events()).toBe(2);
  });

  it("an object whose projection is no longer kept leaves the store as a delete", async () => {
    const { api, informer, values, log } = await setUp();
    api.set("a", 1);
    informer.start();
    await eventually(() => api.open !== undefined, "a watch");
    api.event("MODIFIED", api.set("a", -1));
    api.event("ADDED", api.set("z", -5)); // never kept
    api.event("DELETED", api.set("z", -5));
    api.event("ADDED", api.set("b", 2));
    await eventually(() => log.length === 3, "a gone and b come");
    expect(values()).toEqual([{ name: "b", v: 2 }]);
    expect(log).toEqual(["upsert a", "delete a", "upsert b"]);
  });

  it("an ERROR event with code 410 makes it relist and the store follows the new list", async () => {
    const { api, informer, values, relists } = await setUp();
    api.set("a", 1);
    informer.start();
    await eventually(() => api.open !== undefined, "a watch");
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
    await eventually(() => api.lists === 2 && api.open !== first, "a relist and a new watch");
    expect(values()).toEqual([{ name: "c", v: 9 }]);
    expect(relists).toEqual(["initial", "expired"]);
  });

  it("a watch refused with HTTP 410 makes it relist", async () => {
    const { api, informer, relists } = await setUp();
    api.plan = ["410-status"];
    informer.start();
    await eventually(() => api.lists === 2 && api.open !== undefined, "a relist and a watch");
    expect(relists).toEqual(["initial", "expired"]);
  });

  it("a cut connection is resumed from the last resourceVersion seen, without a relist", async () => {
    const { api, informer, values } = await setUp();
    informer.start();
    await eventually(() => api.open !== undefined, "a watch");
    api.event("ADDED", api.set("a", 1));
    await eventually(() => values().length === 1, "the event");
    api.open?.socket?.destroy();
    await eventually(() => api.watches.length === 2, "a second watch");
    expect(api.watches[1]?.get("resourceVersion")).toBe(String(api.rv));
    expect(api.lists).toBe(1);
    await eventually(() => informer.watching, "watching again");
  });

  it("a watch the server ends is resumed at once", async () => {
    const { api, informer } = await setUp();
    informer.start();
    await eventually(() => api.open !== undefined, "a watch");
    api.open?.end();
    await eventually(() => api.watches.length === 2, "a second watch");
    expect(api.lists).toBe(1);
  });
});
