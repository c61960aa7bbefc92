// List, then watch from the list's resourceVersion, keeping every object in a local store: the informer
// pattern, small enough to read.
// - After the first list the store is complete (`synced`); then it follows every change the watch reports.
// - A watch the server ends (timeoutSeconds) is resumed from the last resourceVersion seen.
// - A watch that expired (410 Gone, as an HTTP status or an ERROR event) is replaced by a fresh list; the
//   objects that vanished in between are reported as deleted.
// - Connection failures (an apiserver restart) are retried with capped, jittered backoff.
import type { KubeApi, WatchEvent } from "./client.ts";
import { KubeError } from "./client.ts";

export interface KubeObject {
  metadata: { name?: string; namespace?: string; resourceVersion?: string; [k: string]: unknown };
  [k: string]: unknown;
}

export type InformerEvent<T> =
  | { type: "upsert"; key: string; object: T; previous?: T }
  | { type: "delete"; key: string; object: T };

export interface InformerOptions<T> {
  kube: KubeApi;
  /** Collection path, e.g. /apis/berth.dev/v1alpha1/sessions (all namespaces). */
  path: string;
  labelSelector?: string;
  /** Parse/narrow an object (e.g. zod); throwing drops the object with an error to `onError`. */
  parse?: (o: KubeObject) => T;
  onEvent: (e: InformerEvent<T>) => void;
  /** Called on relists and watch failures (logging, metrics). Never stops the informer. */
  onError?: (err: unknown, what: string) => void;
  onSynced?: () => void;
  pageSize?: number;
  watchTimeoutSeconds?: number;
}

class WatchExpired extends Error {}

/**
 * resourceVersions are opaque by contract, but every apiserver backed by etcd hands out its revision:
 * compared as integers when both are integers, else never considered older.
 */
function olderThan(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) < BigInt(b);
}

export function keyOf(o: { metadata: { name?: string; namespace?: string } }): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name ?? ""}` : (o.metadata.name ?? "");
}

export class Informer<T extends KubeObject> {
  readonly store = new Map<string, T>();
  #synced = false;
  #resourceVersion = "";
  readonly #opts: InformerOptions<T>;
  readonly #abort = new AbortController();
  #loop: Promise<void> | undefined;
  relists = 0;

  constructor(opts: InformerOptions<T>) {
    this.#opts = opts;
  }

  get synced(): boolean {
    return this.#synced;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#loop;
  }

  /** Resolves when the first list is in the store. */
  async waitForSync(timeoutMs = 30_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!this.#synced) {
      if (Date.now() > until) throw new Error(`informer ${this.#opts.path} did not sync in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  #parse(o: KubeObject): T | undefined {
    if (!this.#opts.parse) return o as T;
    try {
      return this.#opts.parse(o);
    } catch (e) {
      this.#opts.onError?.(e, `unparsable object ${keyOf(o)}`);
      return undefined;
    }
  }

  /**
   * A write's answer, put in the store at once so that the controller's next look sees its own write
   * before the watch brings it. Older versions arriving later from the watch are then ignored.
   */
  observe(raw: KubeObject): void {
    this.#upsert(raw);
  }

  #upsert(raw: KubeObject): void {
    const key = keyOf(raw);
    const obj = this.#parse(raw);
    if (!obj) return;
    const previous = this.store.get(key);
    if (previous && olderThan(raw.metadata.resourceVersion, previous.metadata.resourceVersion)) return;
    this.store.set(key, obj);
    this.#opts.onEvent(
      previous ? { type: "upsert", key, object: obj, previous } : { type: "upsert", key, object: obj },
    );
  }

  async #list(): Promise<void> {
    const seen = new Set<string>();
    let cont: string | undefined;
    do {
      const page = await this.#opts.kube.json<{
        metadata: { resourceVersion: string; continue?: string };
        items: KubeObject[];
      }>("GET", this.#opts.path, {
        query: { limit: this.#opts.pageSize ?? 500, continue: cont, labelSelector: this.#opts.labelSelector },
        signal: this.#abort.signal,
      });
      for (const item of page.items) {
        seen.add(keyOf(item));
        const prev = this.store.get(keyOf(item));
        if (prev && prev.metadata.resourceVersion === item.metadata.resourceVersion) continue;
        this.#upsert(item);
      }
      cont = page.metadata.continue || undefined;
      this.#resourceVersion = page.metadata.resourceVersion;
    } while (cont);
    for (const [key, obj] of this.store) {
      if (!seen.has(key)) {
        this.store.delete(key);
        this.#opts.onEvent({ type: "delete", key, object: obj });
      }
    }
    if (!this.#synced) {
      this.#synced = true;
      this.#opts.onSynced?.();
    }
  }

  #apply(e: WatchEvent): void {
    if (e.type === "ERROR") {
      const code = (e.object as { code?: number }).code;
      if (code === 410) throw new WatchExpired("watch expired (410)");
      throw new KubeError("WATCH", this.#opts.path, code ?? 0, e.object);
    }
    const obj = e.object as KubeObject;
    if (obj.metadata?.resourceVersion) this.#resourceVersion = obj.metadata.resourceVersion;
    if (e.type === "BOOKMARK") return;
    if (e.type === "DELETED") {
      const key = keyOf(obj);
      const prev = this.store.get(key);
      this.store.delete(key);
      const parsed = prev ?? this.#parse(obj);
      if (parsed) this.#opts.onEvent({ type: "delete", key, object: parsed });
      return;
    }
    this.#upsert(obj);
  }

  async #run(): Promise<void> {
    let failures = 0;
    let needList = true;
    while (!this.#abort.signal.aborted) {
      try {
        if (needList) {
          await this.#list();
          needList = false;
          this.relists++;
        }
        const timeout = this.#opts.watchTimeoutSeconds ?? 300;
        await this.#opts.kube.watch(
          this.#opts.path,
          {
            resourceVersion: this.#resourceVersion,
            allowWatchBookmarks: true,
            timeoutSeconds: Math.round(timeout * (1 + Math.random() / 2)),
            labelSelector: this.#opts.labelSelector,
          },
          (e) => this.#apply(e),
          { signal: this.#abort.signal, idleTimeoutMs: (timeout * 1.5 + 30) * 1000, onOpen: () => (failures = 0) },
        );
      } catch (e) {
        if (this.#abort.signal.aborted) return;
        if (e instanceof WatchExpired || (e instanceof KubeError && e.status === 410)) {
          needList = true;
          this.#opts.onError?.(e, "watch expired; relisting");
          continue;
        }
        failures++;
        this.#opts.onError?.(e, `watch ${this.#opts.path} failed (attempt ${failures})`);
        // After a few failures the resourceVersion may be too old anyway: list afresh.
        if (failures >= 3) needList = true;
        const delay = Math.min(30_000, 250 * 2 ** Math.min(failures - 1, 7)) * (0.5 + Math.random() / 2);
        await new Promise<void>((r) => {
          const t = setTimeout(r, delay);
          this.#abort.signal.addEventListener(
            "abort",
            () => {
              clearTimeout(t);
              r();
            },
            { once: true },
          );
        });
      }
    }
  }
}
