// An apiserver in memory, enough for the session controller in-process: list and watch of collections,
// create (409 when the name exists), get, status PUT with the resourceVersion precondition (409 when
// stale), merge PATCH, server-side apply (creates, or replaces what the applied object names; one field
// manager, so no conflicts) and DELETE. `fail` scripts errors; `log` records every request and its answer.
import type { KubeApi, KubeResponse, RequestOptions, WatchEvent } from "../kube/client.ts";
import { APPLY_PATCH, KubeError } from "../kube/client.ts";

type Obj = {
  metadata: {
    name?: string;
    generateName?: string;
    namespace?: string;
    resourceVersion?: string;
    [k: string]: unknown;
  };
  [k: string]: unknown;
};

interface Where {
  plural: string;
  namespace?: string;
  name?: string;
  sub?: string;
}

function where(path: string): Where {
  const p = path.split("?")[0] ?? "";
  const rest = p.startsWith("/api/v1/") ? p.slice("/api/v1/".length) : p.split("/").slice(4).join("/");
  const s = rest.split("/").filter(Boolean);
  if (s[0] === "namespaces" && s.length >= 3)
    return {
      plural: s[2] as string,
      namespace: s[1] as string,
      ...(s[3] ? { name: s[3] } : {}),
      ...(s[4] ? { sub: s[4] } : {}),
    };
  return { plural: s[0] as string, ...(s[1] ? { name: s[1] } : {}), ...(s[2] ? { sub: s[2] } : {}) };
}

const keyOf = (plural: string, namespace: string | undefined, name: string) => `${plural}|${namespace ?? ""}|${name}`;

function merge(target: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out = { ...target };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (typeof v === "object" && !Array.isArray(v) && typeof out[k] === "object" && out[k] !== null)
      out[k] = merge(out[k] as Record<string, unknown>, v as Record<string, unknown>);
    else out[k] = v;
  }
  return out;
}

export class MemoryKube implements KubeApi {
  readonly server = "memory://";
  readonly objects = new Map<string, Obj>();
  #rv = 100;
  #uid = 0;
  readonly #watchers = new Set<{ plural: string; namespace?: string; onEvent: (e: WatchEvent) => void }>();
  /** Watches open now. */
  get watching(): number {
    return this.#watchers.size;
  }
  /** Every request: method, path, the answer's status, and the body sent. */
  readonly log: { method: string; path: string; status: number; body?: unknown; apply?: true }[] = [];
  /** A status to answer instead of serving the request, or undefined to serve it. */
  fail: (method: string, path: string, body: unknown) => number | undefined = () => undefined;

  /** Puts an object in place as if created by someone else. */
  put(plural: string, o: Obj): void {
    const stored = structuredClone(o);
    stored.metadata.resourceVersion = String(++this.#rv);
    stored.metadata.uid ??= `uid-${++this.#uid}`;
    this.objects.set(keyOf(plural, o.metadata.namespace, o.metadata.name as string), stored);
  }

  list(plural: string): Obj[] {
    return [...this.objects.entries()].filter(([k]) => k.startsWith(`${plural}|`)).map(([, o]) => o);
  }

  #emit(plural: string, type: WatchEvent["type"], o: Obj): void {
    for (const w of this.#watchers) {
      if (w.plural !== plural || (w.namespace && w.namespace !== o.metadata.namespace)) continue;
      const object = structuredClone(o);
      setImmediate(() => w.onEvent({ type, object }));
    }
  }

  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<KubeResponse<T>> {
    await new Promise((r) => setImmediate(r));
    const apply = method === "PATCH" && opts.contentType === APPLY_PATCH;
    const res = this.#serve(method, path, opts.body as Obj | undefined, apply);
    this.log.push({
      method,
      path,
      status: res.status,
      ...(opts.body ? { body: structuredClone(opts.body) } : {}),
      ...(apply ? { apply: true as const } : {}),
    });
    return res as KubeResponse<T>;
  }

  #serve(method: string, path: string, body: Obj | undefined, apply = false): KubeResponse<unknown> {
    const failed = this.fail(method, path, body);
    if (failed !== undefined) return { status: failed, body: { kind: "Status", code: failed, message: "scripted" } };
    const w = where(path);
    const key = w.name ? keyOf(w.plural, w.namespace, w.name) : undefined;
    const stored = key ? this.objects.get(key) : undefined;
    if (method === "GET" && !w.name) {
      const items = this.list(w.plural).filter((o) => !w.namespace || o.metadata.namespace === w.namespace);
      return { status: 200, body: { metadata: { resourceVersion: String(this.#rv) }, items } };
    }
    if (method === "GET") return stored ? { status: 200, body: stored } : { status: 404, body: {} };
    if (method === "POST") {
      const o = structuredClone(body as Obj);
      o.metadata.namespace ??= w.namespace;
      o.metadata.name ??= `${o.metadata.generateName ?? "x-"}${++this.#uid}`;
      const k = keyOf(w.plural, o.metadata.namespace, o.metadata.name);
      if (this.objects.has(k)) return { status: 409, body: { reason: "AlreadyExists" } };
      o.metadata.resourceVersion = String(++this.#rv);
      o.metadata.uid = `uid-${++this.#uid}`;
      this.objects.set(k, o);
      this.#emit(w.plural, "ADDED", o);
      return { status: 201, body: o };
    }
    if (apply && key) {
      const o = structuredClone(body as Obj);
      if (!stored) {
        o.metadata = {
          ...o.metadata,
          namespace: w.namespace,
          resourceVersion: String(++this.#rv),
          uid: `uid-${++this.#uid}`,
        };
        this.objects.set(key, o);
        this.#emit(w.plural, "ADDED", o);
        return { status: 201, body: o };
      }
      const next: Obj = {
        ...stored,
        ...o,
        metadata: { ...stored.metadata, ...o.metadata, resourceVersion: String(++this.#rv) },
      };
      this.objects.set(key, next);
      this.#emit(w.plural, "MODIFIED", next);
      return { status: 200, body: next };
    }
    if (!stored || !key) return { status: 404, body: {} };
    if (method === "PUT") {
      const o = body as Obj;
      if (o.metadata.resourceVersion !== stored.metadata.resourceVersion)
        return { status: 409, body: { reason: "Conflict" } };
      const next = w.sub === "status" ? { ...stored, status: structuredClone(o.status) } : structuredClone(o);
      next.metadata = { ...stored.metadata, resourceVersion: String(++this.#rv) };
      this.objects.set(key, next);
      this.#emit(w.plural, "MODIFIED", next);
      return { status: 200, body: next };
    }
    if (method === "PATCH") {
      const next = merge(stored, body as Record<string, unknown>) as Obj;
      next.metadata = { ...stored.metadata, resourceVersion: String(++this.#rv) };
      this.objects.set(key, next);
      this.#emit(w.plural, "MODIFIED", next);
      return { status: 200, body: next };
    }
    if (method === "DELETE") {
      this.objects.delete(key);
      this.#emit(w.plural, "DELETED", stored);
      return { status: 200, body: stored };
    }
    return { status: 405, body: {} };
  }

  async json<T = unknown>(method: string, path: string, opts?: RequestOptions): Promise<T> {
    const res = await this.request<T>(method, path, opts);
    if (res.status >= 300) throw new KubeError(method, path, res.status, res.body);
    return res.body;
  }

  async watch(
    path: string,
    _query: RequestOptions["query"],
    onEvent: (e: WatchEvent) => void,
    opts: { signal?: AbortSignal; idleTimeoutMs: number; onOpen?: () => void },
  ): Promise<void> {
    const w = where(path);
    const watcher = { plural: w.plural, ...(w.namespace ? { namespace: w.namespace } : {}), onEvent };
    this.#watchers.add(watcher);
    opts.onOpen?.();
    await new Promise<void>((resolve) => {
      if (opts.signal?.aborted) resolve();
      opts.signal?.addEventListener("abort", () => resolve(), { once: true });
    });
    this.#watchers.delete(watcher);
  }
}
