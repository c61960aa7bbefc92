// List, then watch from the list's resourceVersion, keeping every object (or a projection of it) in a
// local store: the informer pattern, small enough to read.
// - After the first list the store is complete (`synced`); then it follows every change the watch reports.
// - A watch the server ends (timeoutSeconds) is resumed from the last resourceVersion seen.
// - A watch that expired (410 Gone, as an HTTP status or an ERROR event) is replaced by a fresh list; the
//   objects that vanished in between are reported as deleted. So is a watch the apiserver refused (403
//   after an RBAC change, 5xx), and one that failed three times running.
// - Connection failures (an apiserver restart) are retried with capped, jittered backoff, resuming from
//   the last resourceVersion seen.
import type { KubeApi, WatchEvent } from "./client.ts";
import { isStatus, KubeError } from "./client.ts";
import { sleep } from "./sleep.ts";

export interface KubeObject {
  metadata: { name?: string; namespace?: string; resourceVersion?: string; [k: string]: unknown };
  [k: string]: unknown;
}

export type InformerEvent<T> =
  | { type: "upsert"; key: string; object: T; previous?: T }
  | { type: "delete"; key: string; object: T };

export interface InformerOptions<T> {
  kube: KubeApi;
  /** Collection path, e.g. resourcePath(SessionKind) from @berth/crds (all namespaces). */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * What the store keeps of an object (e.g. a zod parse, or a projection to the fields a caller reads).
   * Undefined means the object is not kept (and leaves the store if it was); throwing drops the object
   * with an error to `onError`.
   */
  parse?: (o: KubeObject) => T | undefined;
  /**
   * An update for which this holds replaces the stored object without an event: with a projection, the
   * status heartbeats it drops wake nobody.
   */
  unchanged?: (previous: T, next: T) => boolean;
  onEvent: (e: InformerEvent<T>) => void;
  /**
   * Called on relists and failures (logging, metrics), with a constant message ("list failed; retrying",
   * "watch failed; retrying", "watch expired; relisting", "unparsable object") and fields to log by it.
   * Never stops the informer.
   */
  onError?: (err: unknown, what: string, fields: InformerErrorFields) => void;
  onSynced?: () => void;
  /** Called after every list: "initial", "expired" (410), "status <code>" (a refused watch) or "failures". */
  onRelist?: (reason: string) => void;
  /** Called when `watching` flips. */
  onWatchingChange?: (watching: boolean) => void;
  pageSize?: number;
  /** Timeout of one list page; default the client's request timeout. */
  listTimeoutMs?: number;
  /** Server-side watch timeout; a random value in [n, 1.5n] is used per watch so replicas spread out. */
  watchTimeoutSeconds?: number;
  /** Delay before retry number `failures` (1 = after the first failure). Default: 250 ms doubling to 30 s, jittered. */
  retryDelay?: (failures: number) => number;
  /** Source of jitter; tests may fix it. */
  random?: () => number;
}

export interface InformerErrorFields {
  path: string;
  key?: string;
  resourceVersion?: string;
  failures?: number;
  retryInMs?: number;
}

/**
 * resourceVersions are opaque by contract, but every apiserver backed by etcd hands out its revision:
 * compared as integers when both are integers, else never considered older.
 */
function olderThan(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) < BigInt(b);
}

export function keyOf(o: { metadata?: { name?: string; namespace?: string } }): string {
  const m = o.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name ?? ""}` : (m.name ?? "");
}

const defaultRetryDelay = (failures: number, random: () => number) =>
  Math.min(30_000, 250 * 2 ** Math.min(failures - 1, 7)) * (0.5 + random() / 2);

export class Informer<T = KubeObject> {
  readonly store = new Map<string, T>();
  /** resourceVersion of each stored object, kept apart so that a projection need not carry it. */
  readonly #versions = new Map<string, string | undefined>();
  #synced = false;
  #watching = false;
  #resourceVersion = "";
  readonly #opts: InformerOptions<T>;
  readonly #random: () => number;
  readonly #abort = new AbortController();
  #loop: Promise<void> | undefined;
  relists = 0;

  constructor(opts: InformerOptions<T>) {
    this.#opts = opts;
    this.#random = opts.random ?? Math.random;
  }

  /** True once the first list is in the store (client-go's HasSynced: it stays true). */
  get synced(): boolean {
    return this.#synced;
  }

  /** True while the store is complete and a watch is open: false from a failure until the next list or watch. */
  get watching(): boolean {
    return this.#watching;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#loop;
    this.#setWatching(false);
  }

  /** Resolves when the first list is in the store. */
  async waitForSync(timeoutMs = 30_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!this.#synced) {
      if (Date.now() > until) throw new Error(`informer ${this.#opts.path} did not sync in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  #setWatching(v: boolean): void {
    if (this.#watching === v) return;
    this.#watching = v;
    this.#opts.onWatchingChange?.(v);
  }

  /** The stored form of an object; `dropped` when parse threw (the store is then left as it is). */
  #parse(o: KubeObject): T | undefined | "dropped" {
    if (!this.#opts.parse) return o as T;
    try {
      return this.#opts.parse(o);
    } catch (e) {
      this.#opts.onError?.(e, "unparsable object", { path: this.#opts.path, key: keyOf(o) });
      return "dropped";
    }
  }

  /**
   * A write's answer, put in the store at once so that the controller's next look sees its own write
   * before the watch brings it. Older versions arriving later from the watch are then ignored.
   *
   * An answer the watch (or the last list) has already gone past is dropped: the store holds that
   * version or a later one, or the object's deletion, which putting the answer back would undo (a
   * phantom that only the next relist would remove).
   */
  observe(raw: KubeObject): void {
    if (this.passed(raw.metadata.resourceVersion)) return;
    this.#upsert(raw);
  }

  /**
   * Whether the store already reflects every change up to `resourceVersion`: the last full list or a
   * watch event (bookmarks included) was at or past it. Watches deliver in resourceVersion order.
   */
  passed(resourceVersion: string | undefined): boolean {
    if (resourceVersion === undefined || this.#resourceVersion === "") return false;
    return resourceVersion === this.#resourceVersion || olderThan(resourceVersion, this.#resourceVersion);
  }

  #upsert(raw: KubeObject): void {
    const key = keyOf(raw);
    const rv = raw.metadata.resourceVersion;
    if (this.store.has(key) && olderThan(rv, this.#versions.get(key))) return;
    const obj = this.#parse(raw);
    if (obj === "dropped") return;
    if (obj === undefined) {
      this.#remove(key);
      return;
    }
    const previous = this.store.get(key);
    this.store.set(key, obj);
    this.#versions.set(key, rv);
    if (previous === undefined) this.#opts.onEvent({ type: "upsert", key, object: obj });
    else if (!this.#opts.unchanged?.(previous, obj)) this.#opts.onEvent({ type: "upsert", key, object: obj, previous });
  }

  #remove(key: string, fallback?: KubeObject): void {
    const prev = this.store.get(key);
    this.store.delete(key);
    this.#versions.delete(key);
    const parsed = prev ?? (fallback ? this.#parse(fallback) : undefined);
    if (parsed !== undefined && parsed !== "dropped") this.#opts.onEvent({ type: "delete", key, object: parsed });
  }

  async #list(): Promise<void> {
    const seen = new Set<string>();
    let cont: string | undefined;
    let listedAt = this.#resourceVersion;
    do {
      const page = await this.#opts.kube.json<{
        metadata: { resourceVersion: string; continue?: string };
        items: KubeObject[];
      }>("GET", this.#opts.path, {
        query: {
          limit: this.#opts.pageSize ?? 500,
          continue: cont,
          labelSelector: this.#opts.labelSelector,
          fieldSelector: this.#opts.fieldSelector,
        },
        signal: this.#abort.signal,
        ...(this.#opts.listTimeoutMs === undefined ? {} : { timeoutMs: this.#opts.listTimeoutMs }),
      });
      for (const item of page.items ?? []) {
        const key = keyOf(item);
        seen.add(key);
        if (this.store.has(key) && this.#versions.get(key) === item.metadata.resourceVersion) continue;
        this.#upsert(item);
      }
      cont = page.metadata.continue || undefined;
      listedAt = page.metadata.resourceVersion;
    } while (cont);
    // Only once every page is in: observe() drops answers at or below it, which an unread page may hold.
    this.#resourceVersion = listedAt;
    for (const key of [...this.store.keys()]) if (!seen.has(key)) this.#remove(key);
    if (!this.#synced) {
      this.#synced = true;
      this.#opts.onSynced?.();
    }
    this.#setWatching(true);
  }

  #apply(e: WatchEvent): void {
    if (e.type === "ERROR") {
      // A Status; code 410 (expired) is handled like the HTTP answer 410.
      throw new KubeError("WATCH", this.#opts.path, (e.object as { code?: number }).code ?? 500, e.object);
    }
    const obj = e.object as KubeObject;
    if (obj.metadata?.resourceVersion) this.#resourceVersion = obj.metadata.resourceVersion;
    if (e.type === "BOOKMARK") return;
    if (e.type === "DELETED") {
      this.#remove(keyOf(obj), obj);
      return;
    }
    this.#upsert(obj);
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    let failures = 0;
    let relist: string | undefined = "initial";
    while (!signal.aborted) {
      let listing = false;
      try {
        if (relist !== undefined) {
          listing = true;
          await this.#list();
          listing = false;
          this.relists++;
          this.#opts.onRelist?.(relist);
          relist = undefined;
        }
        const timeout = this.#opts.watchTimeoutSeconds ?? 300;
        const timeoutSeconds = Math.floor(timeout * (1 + this.#random() / 2));
        await this.#opts.kube.watch(
          this.#opts.path,
          {
            resourceVersion: this.#resourceVersion,
            allowWatchBookmarks: true,
            timeoutSeconds,
            labelSelector: this.#opts.labelSelector,
            fieldSelector: this.#opts.fieldSelector,
          },
          (e) => this.#apply(e),
          {
            signal,
            idleTimeoutMs: (timeoutSeconds + 30) * 1000,
            onOpen: () => {
              failures = 0;
              this.#setWatching(true);
            },
          },
        );
        // The server ended the watch (timeoutSeconds): resume at once.
      } catch (e) {
        if (signal.aborted) return;
        this.#setWatching(false);
        if (isStatus(e, 410)) {
          // client-go relists at once on 410; the list itself backs off if it fails.
          relist = "expired";
          const fields = { path: this.#opts.path, resourceVersion: this.#resourceVersion };
          this.#opts.onError?.(e, "watch expired; relisting", fields);
          continue;
        }
        failures++;
        // Anything but a lost connection (403 after an RBAC change, 5xx) gets a fresh list; so does a
        // watch that keeps failing, whose resourceVersion may be too old by then anyway.
        if (relist === undefined && e instanceof KubeError) relist = `status ${e.status}`;
        else if (relist === undefined && failures >= 3) relist = "failures";
        const retryInMs = Math.round(this.#opts.retryDelay?.(failures) ?? defaultRetryDelay(failures, this.#random));
        const what = listing ? "list failed; retrying" : "watch failed; retrying";
        this.#opts.onError?.(e, what, { path: this.#opts.path, failures, retryInMs });
        await sleep(retryInMs, signal);
      }
    }
  }
}
