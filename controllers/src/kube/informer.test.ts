import { describe, expect, it } from "vitest";
import type { KubeApi, KubeResponse, RequestOptions, WatchEvent } from "./client.ts";
import { Informer, type KubeObject } from "./informer.ts";

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

  it("keeps a write's answer over an older version that the watch brings later", async () => {
    const kube = new FakeKube();
    kube.items = [obj("a", "5")];
    let emit: ((e: WatchEvent) => void) | undefined;
    kube.scripts.push((e) => {
      emit = e;
      return new Promise(() => {});
    });
    const inf = new Informer({ kube, path: "/x", onEvent: () => {} });
    inf.start();
    await until(() => emit !== undefined);
    inf.observe(obj("a", "9"));
    emit?.({ type: "MODIFIED", object: obj("a", "7") });
    expect(inf.store.get("ns/a")?.metadata.resourceVersion).toBe("9");
    await inf.stop();
  });
});
