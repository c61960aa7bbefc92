// Where a session's traffic goes. Pluggable: in a cluster, the session's Service by DNS; on the local
// fleet and in tests, a loopback stand-in application (pod IPs there are data, nothing connects to them).
//
// `undefined` means "there is no upstream for this session right now" (paused, gone, not started):
// the gateway then asks the control plane why, and shows a page instead of waiting.

export interface Upstream {
  host: string;
  port: number;
}

export interface UpstreamResolver {
  resolve(cr: string): Promise<Upstream | undefined> | Upstream | undefined;
}

export interface ServiceDnsOptions {
  /** Namespace of the sessions' Services on this cluster. */
  namespace: string;
  /** The Service port that fronts lab, terminal and code. */
  port: number;
  /** Default cluster.local. */
  clusterDomain?: string;
}

/**
 * The Service named after the session, in the sessions' namespace: {cr}.{ns}.svc.{domain}:{port}.
 * A paused session has no pod, so the connection is refused (or DNS fails once the Service is gone);
 * the gateway turns that into the paused/gone page.
 */
export function serviceDnsUpstreams(o: ServiceDnsOptions): UpstreamResolver {
  const domain = o.clusterDomain ?? "cluster.local";
  return { resolve: (cr) => ({ host: `${cr}.${o.namespace}.svc.${domain}`, port: o.port }) };
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

/**
 * An upstream only while `isUp(cr)` says the session's pod runs; answers are cached for `ttlMs` so the
 * check costs nothing per request. For the local fleet, where the upstream is a stand-in that answers for
 * every session: the gate makes a paused session (pod deleted) look paused, as a refused connection to
 * its Service does in a real cluster.
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
