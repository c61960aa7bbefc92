// Where a session's traffic goes. Pluggable: in a cluster, the session pod's address as the operator's
// pod watch sees it (RouteFeedUpstreams: its GET /routes, followed as it changes; no Service per session);
// on the local fleet and in tests, a loopback stand-in application (pod IPs there are data, nothing
// listens on them), reached only while the operator's table (or the cluster's API) says the pod runs.
//
// `undefined` means "there is no upstream for this session right now" (paused, gone, not started):
// the gateway then asks the control plane why, and shows a page instead of waiting.
import { readFile } from "node:fs/promises";
import { BlockList, isIP } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

export interface Upstream {
  host: string;
  port: number;
}

export interface UpstreamResolver {
  resolve(cr: string): Promise<Upstream | undefined> | Upstream | undefined;
  /** Stops what it follows (a feed's connection); the gateway's close() calls it. */
  close?(): Promise<void>;
}

/**
 * A fixed table: cr -> "host:port", with "*" as the default for every other session. Tests change it
 * while the gateway runs (`set`, `delete`) to pause and resume a session's upstream.
 */
export class StaticUpstreams implements UpstreamResolver {
  readonly #map = new Map<string, Upstream>();
  constructor(entries: Record<string, string | Upstream> = {}) {
    for (const [cr, u] of Object.entries(entries)) this.set(cr, u);
  }
  set(cr: string, u: string | Upstream): void {
    this.#map.set(cr, typeof u === "string" ? parseHostPort(u) : u);
  }
  delete(cr: string): void {
    this.#map.delete(cr);
  }
  resolve(cr: string): Upstream | undefined {
    return this.#map.get(cr) ?? this.#map.get("*");
  }
}

export function parseHostPort(s: string): Upstream {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(s.replace(/^https?:\/\//, "").replace(/\/$/, ""));
  if (!m) throw new Error(`not host:port: ${s}`);
  return { host: (m[1] ?? m[2]) as string, port: Number(m[3]) };
}

/** Whether an address lies in one of `cidrs` (IPv4 or IPv6); a host name never does. */
export function addressMatcher(cidrs: readonly string[]): (host: string) => boolean {
  const list = new BlockList();
  for (const c of cidrs) {
    const [net, bits] = c.split("/");
    list.addSubnet(net as string, Number(bits), isIP(net as string) === 6 ? "ipv6" : "ipv4");
  }
  return (host) => {
    const v = isIP(host);
    return v !== 0 && list.check(host, v === 6 ? "ipv6" : "ipv4");
  };
}

/**
 * An upstream only while `isUp(cr)` says the session's pod runs; answers are cached for `ttlMs` so the
 * check costs nothing per request. For the local fleet, where the upstream is a stand-in that answers for
 * every session: the gate makes a paused session (pod deleted) look paused, as the route's removal does
 * in a real cluster. For beds without an operator (the connect bed seeds pods itself).
 */
export function gatedUpstreams(
  inner: UpstreamResolver,
  isUp: (cr: string) => Promise<boolean>,
  o: { ttlMs?: number; now?: () => number } = {},
): UpstreamResolver {
  const ttl = o.ttlMs ?? 2000;
  const now = o.now ?? Date.now;
  const cache = new Map<string, { up: boolean; at: number }>();
  return {
    async resolve(cr) {
      const hit = cache.get(cr);
      let up = hit && now() - hit.at < ttl ? hit.up : undefined;
      if (up === undefined) {
        up = await isUp(cr).catch(() => false);
        if (cache.size > 10_000) cache.clear();
        cache.set(cr, { up, at: now() });
      }
      return up ? inner.resolve(cr) : undefined;
    },
  };
}

export interface RouteFeedOptions {
  /** The operator's GET /routes (its status port); a function is asked again at each connection. */
  url: string | (() => string | undefined);
  /** The cluster's operator token (the one the gateway calls the control plane with), re-read per connection. */
  tokenFile: string;
  /**
   * Where to connect for a routed session (default: the pod's own address). The local fleet dials its
   * stand-in instead: pod addresses on kwok are data.
   */
  dial?: (route: Upstream, cr: string) => Upstream;
  /** First delay before connecting again; doubles up to 2 s. Default 100 ms. */
  retryMs?: number;
  /** A connection silent this long (the operator sends a line every 10 s) is dropped and made again. */
  silenceMs?: number;
  /**
   * With no operator's stream this long, the last table is dropped: a pod address may by then belong to
   * another session's pod. Default 60 s (a leader's lease is 15 s).
   */
  staleMs?: number;
  onState?: (state: "connected" | "disconnected", why?: string) => void;
}

/**
 * The operator's table of session pods, followed over one long-lived connection: the whole table first,
 * then each change as the operator's pod watch sees it (operator/src/routes.ts), so a pod that restarts or
 * moves is followed within the watch's delay. Resolving is a Map lookup. While the operator cannot be
 * reached (a restart, a new leader) the last table stays in use for `staleMs`: sessions keep working
 * through a failover; the next connection's first line replaces it whole.
 */
export class RouteFeedUpstreams implements UpstreamResolver {
  readonly #o: RouteFeedOptions;
  #routes = new Map<string, Upstream>();
  /** Aborted by close(): ends the connection in hand, one still being opened, and the wait between tries. */
  readonly #closing = new AbortController();
  #synced = false;
  #waiters: (() => void)[] = [];
  #loop: Promise<void> | undefined;
  /** The last connection delivered a table (it was the leader's, until it ended). */
  #tabled = false;

  constructor(o: RouteFeedOptions) {
    this.#o = o;
  }

  start(): this {
    this.#loop ??= this.#run();
    return this;
  }

  /** Resolves once a whole table has been received (after a restart of the gateway). */
  synced(): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((r) => this.#waiters.push(r));
  }

  get size(): number {
    return this.#routes.size;
  }

  /** The pod's own address as the operator last said (before `dial`). */
  route(cr: string): Upstream | undefined {
    return this.#routes.get(cr);
  }

  resolve(cr: string): Upstream | undefined {
    const r = this.#routes.get(cr);
    if (!r) return undefined;
    return this.#o.dial ? this.#o.dial(r, cr) : r;
  }

  async close(): Promise<void> {
    this.#closing.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    let delay = this.#o.retryMs ?? 100;
    let since = Date.now();
    const closing = this.#closing.signal;
    while (!closing.aborted) {
      const why = await this.#follow().catch((e: unknown) => (e as Error).message);
      if (closing.aborted) return;
      if (why === undefined || this.#tabled) {
        delay = this.#o.retryMs ?? 100;
        since = Date.now();
        this.#tabled = false;
      }
      if (Date.now() - since > (this.#o.staleMs ?? 60_000)) this.#routes = new Map();
      this.#o.onState?.("disconnected", why ?? "the operator ended the stream");
      await sleep(delay, undefined, { signal: closing }).catch(() => undefined);
      delay = Math.min(2000, delay * 2);
    }
  }

  /** One connection; resolves undefined when it ended after a table, else with why it failed. */
  async #follow(): Promise<string | undefined> {
    const url = typeof this.#o.url === "function" ? this.#o.url() : this.#o.url;
    if (!url) return "no operator to ask yet";
    const token = (await readFile(this.#o.tokenFile, "utf8").catch(() => "")).trim();
    // The silence watch's own abort, joined with close()'s: a close that came while the token was being
    // read still ends this connection (it was missed once, and close() waited on a stream forever).
    const abort = new AbortController();
    const signal = AbortSignal.any([abort.signal, this.#closing.signal]);
    let silence: NodeJS.Timeout | undefined;
    const watch = () => {
      clearTimeout(silence);
      silence = setTimeout(() => abort.abort(), this.#o.silenceMs ?? 30_000);
    };
    try {
      watch();
      const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal });
      if (res.status !== 200 || !res.body) {
        await res.body?.cancel();
        return `the operator answered ${res.status}`;
      }
      const decoder = new TextDecoder();
      let buffered = "";
      let tabled = false;
      for await (const chunk of res.body) {
        watch();
        buffered += decoder.decode(chunk as Uint8Array, { stream: true });
        for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (!line.trim()) continue;
          const m = JSON.parse(line) as {
            routes?: Record<string, Upstream>;
            cr?: string;
            route?: Upstream | null;
          };
          if (m.routes) {
            this.#routes = new Map(Object.entries(m.routes).map(([cr, r]) => [cr, { host: r.host, port: r.port }]));
            if (!tabled) this.#o.onState?.("connected");
            tabled = true;
            this.#tabled = true;
            this.#synced = true;
            for (const w of this.#waiters.splice(0)) w();
          } else if (m.cr && tabled) {
            if (m.route) this.#routes.set(m.cr, { host: m.route.host, port: m.route.port });
            else this.#routes.delete(m.cr);
          }
        }
      }
      return tabled ? undefined : "the stream ended before its table";
    } catch (e) {
      if (abort.signal.aborted && !this.#closing.signal.aborted) return "the operator was silent too long";
      throw e;
    } finally {
      clearTimeout(silence);
    }
  }
}
