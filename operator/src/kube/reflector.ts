// List, then watch from the list's resourceVersion, keeping a local store of projected objects — the
// informer pattern, small enough to read. What it promises:
// - After the first list the store is complete; from then on it follows every change the watch reports.
// - A watch the server ends (timeoutSeconds) is resumed from the last resourceVersion seen.
// - A watch that expired (410 Gone, as an HTTP status or an ERROR event) is replaced by a fresh list.
// - Connection failures (an apiserver restart) are retried with capped, jittered backoff, resuming from
//   the last resourceVersion; if that is too old by then, the 410 path relists.
// - `onChange` fires only when the projection of some object changed (see inventory/slim.ts), so status
//   heartbeats that the projection drops wake nobody.
import type { Logger } from "pino";
import { type BackoffPolicy, backoffDelay } from "../backoff.ts";
import { sleep } from "../clock.ts";
import { type KubeClient, KubeError, type WatchEvent } from "./client.ts";

interface KubeObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

interface KubeList {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: KubeObject[];
}

export interface ReflectorOptions<T> {
  client: KubeClient;
  /** Collection path, e.g. `/api/v1/nodes` or `/api/v1/namespaces/x/pods`. */
  path: string;
  /** Name in logs and metrics, e.g. `nodes`. */
  resource: string;
  fieldSelector?: string;
  labelSelector?: string;
  /** The projection kept in the store; undefined means the object is not kept (or is removed). */
  transform: (obj: never) => T | undefined;
  /** Called after the store changed (a list that changed something, or a relevant watch event). */
  onChange: () => void;
  log: Logger;
  backoff: BackoffPolicy;
  pageSize: number;
  /** Server-side watch timeout; a random value in [n, 1.5n] is used per watch so replicas spread out. */
  watchTimeoutSeconds?: number;
  /** Called on every relist (metrics). */
  onRelist?: (reason: string) => void;
  /** Called when `synced` flips. */
  onSyncedChange?: (synced: boolean) => void;
  random?: () => number;
}

interface Entry<T> {
  value: T;
  json: string;
}

class WatchExpired extends Error {}

function keyOf(obj: KubeObject): string {
  const m = obj.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name ?? ""}` : (m.name ?? "");
}

export class Reflector<T> {
  readonly #o: ReflectorOptions<T>;
  #store = new Map<string, Entry<T>>();
  #resourceVersion = "";
  #listed = false;
  #synced = false;
  #abort = new AbortController();
  #loop: Promise<void> | undefined;
  #random: () => number;

  constructor(opts: ReflectorOptions<T>) {
    this.#o = opts;
    this.#random = opts.random ?? Math.random;
  }

  /** True while the store is complete and a watch is open (or was open and ended cleanly). */
  get synced(): boolean {
    return this.#synced;
  }

  /** True once the first list has completed: the store may be used for a full report. */
  get listed(): boolean {
    return this.#listed;
  }

  get size(): number {
    return this.#store.size;
  }

  *values(): IterableIterator<T> {
    for (const e of this.#store.values()) yield e.value;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#loop;
    this.#setSynced(false);
  }

  #setSynced(v: boolean): void {
    if (this.#synced === v) return;
    this.#synced = v;
    this.#o.onSyncedChange?.(v);
  }

  get #log(): Logger {
    return this.#o.log;
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    let needList = true;
    let failures = 0;
    let relistReason = "initial";
    while (!signal.aborted) {
      if (needList) {
        try {
          await this.#list(signal);
          needList = false;
          failures = 0;
          this.#o.onRelist?.(relistReason);
        } catch (e) {
          if (signal.aborted) break;
          failures++;
          this.#setSynced(false);
          const retryInMs = backoffDelay(failures, this.#o.backoff, this.#random);
          this.#log.warn(
            { resource: this.#o.resource, error: errInfo(e), failures, retryInMs },
            "list failed; retrying",
          );
          await sleep(retryInMs, signal);
          continue;
        }
      }
      try {
        await this.#watch(signal);
        failures = 0; // the server ended the watch (timeoutSeconds): resume at once
      } catch (e) {
        if (signal.aborted) break;
        if (e instanceof WatchExpired || (e instanceof KubeError && e.status === 410)) {
          // client-go relists at once on 410; the list itself backs off if it fails.
          this.#log.info(
            { resource: this.#o.resource, resourceVersion: this.#resourceVersion },
            "watch expired (410); relisting",
          );
          needList = true;
          relistReason = "expired";
          this.#setSynced(false);
          continue;
        }
        failures++;
        this.#setSynced(false);
        const retryInMs = backoffDelay(failures, this.#o.backoff, this.#random);
        this.#log.warn(
          { resource: this.#o.resource, error: errInfo(e), failures, retryInMs },
          "watch failed; retrying",
        );
        // Anything but a lost connection (403 after an RBAC change, 5xx) gets a fresh list next time.
        if (e instanceof KubeError) {
          needList = true;
          relistReason = `status ${e.status}`;
        }
        await sleep(retryInMs, signal);
      }
    }
  }

  async #list(signal: AbortSignal): Promise<void> {
    const next = new Map<string, Entry<T>>();
    let cont: string | undefined;
    let resourceVersion = "";
    do {
      const page = await this.#o.client.json<KubeList>("GET", this.#o.path, {
        query: {
          limit: this.#o.pageSize,
          continue: cont,
          fieldSelector: this.#o.fieldSelector,
          labelSelector: this.#o.labelSelector,
        },
        signal,
        timeoutMs: 60_000,
      });
      for (const item of page.items ?? []) {
        const value = this.#o.transform(item as never);
        if (value !== undefined) next.set(keyOf(item), { value, json: JSON.stringify(value) });
      }
      cont = page.metadata?.continue || undefined;
      resourceVersion = page.metadata?.resourceVersion ?? "";
    } while (cont);
    let changed = next.size !== this.#store.size;
    if (!changed)
      for (const [k, e] of next) {
        if (this.#store.get(k)?.json !== e.json) {
          changed = true;
          break;
        }
      }
    this.#store = next;
    this.#resourceVersion = resourceVersion;
    const first = !this.#listed;
    this.#listed = true;
    this.#setSynced(true);
    this.#log.debug({ resource: this.#o.resource, objects: next.size, resourceVersion }, "listed");
    if (changed || first) this.#o.onChange();
  }

  async #watch(signal: AbortSignal): Promise<void> {
    const base = this.#o.watchTimeoutSeconds ?? 300;
    const timeoutSeconds = Math.floor(base * (1 + 0.5 * this.#random()));
    await this.#o.client.watch(
      this.#o.path,
      {
        resourceVersion: this.#resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds,
        fieldSelector: this.#o.fieldSelector,
        labelSelector: this.#o.labelSelector,
      },
      (e) => this.#onEvent(e),
      { signal, idleTimeoutMs: (timeoutSeconds + 30) * 1000, onOpen: () => this.#setSynced(true) },
    );
  }

  /** Returns an Error to end the watch with. */
  #onEvent(e: WatchEvent): Error | undefined {
    if (e.type === "ERROR") {
      const status = e.object as { code?: number; reason?: string; message?: string };
      if (status.code === 410) return new WatchExpired(status.message ?? "expired");
      return new KubeError("WATCH", this.#o.path, status.code ?? 500, status);
    }
    const obj = e.object as KubeObject;
    const rv = obj.metadata?.resourceVersion;
    if (rv) this.#resourceVersion = rv;
    if (e.type === "BOOKMARK") return undefined;
    const key = keyOf(obj);
    const value = e.type === "DELETED" ? undefined : this.#o.transform(obj as never);
    const before = this.#store.get(key);
    if (value === undefined) {
      if (before === undefined) return undefined;
      this.#store.delete(key);
    } else {
      const json = JSON.stringify(value);
      if (before?.json === json) return undefined;
      this.#store.set(key, { value, json });
    }
    this.#o.onChange();
    return undefined;
  }
}

/** An error as a log field: message and, for apiserver answers, the status. */
export function errInfo(e: unknown): { message: string; status?: number; code?: string } {
  if (e instanceof KubeError) return { message: e.message, status: e.status };
  if (e instanceof Error) {
    const code = (e as NodeJS.ErrnoException).code;
    return code ? { message: e.message, code } : { message: e.message };
  }
  return { message: String(e) };
}
