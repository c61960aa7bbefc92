// Which registries Berth talks to and how: Docker Hub's API host, HTTPS for public registries, plain HTTP
// only for internal ones an operator trusts (BERTH_IMAGE_INTERNAL_REGISTRIES), and never an internal
// address otherwise (the same address rules as webhooks: api/src/domain/webhooks/ssrf.ts).
//
// An import resolves each host it talks to once (the registry, its token realm, a blob's redirect), checks
// every address, and connects to the checked address for the whole copy (`PinnedHosts`): a name re-pointed
// at an internal address after the check (DNS rebinding) is never reached.

import type { LookupAddress } from "node:dns";
import { isIP } from "node:net";
import { Agent } from "undici";
import type { ImagesConfig } from "../../config.ts";
import { type Resolver, refusedBecause, systemResolver } from "../webhooks/ssrf.ts";
import { DOCKER_HUB } from "./reference.ts";
import { RegistryClient } from "./registry.ts";

export const USER_AGENT = "berth-images";

const hostOnly = (registry: string) =>
  registry
    .replace(/^\[/, "")
    .replace(/\](:\d+)?$/, "")
    .replace(/:\d+$/, "");

/** A host an import may not reach: its name resolves to (or is) an internal address nobody trusted. */
export class SourceRefused extends Error {
  readonly code = "EBERTHFORBIDDEN";
}

/**
 * The addresses of one import's hosts, each resolved and checked once, then reused for every connection
 * (`dispatcher`). Hosts of BERTH_IMAGE_INTERNAL_REGISTRIES (any port) are not checked.
 */
export class PinnedHosts {
  readonly #trusted: Set<string>;
  readonly #resolve: Resolver;
  readonly #pins = new Map<string, Promise<{ address: string; family: 4 | 6 }>>();
  /** Connects every request of a RegistryClient to the pinned address of its host. */
  readonly dispatcher: Agent;

  constructor(config: Pick<ImagesConfig, "internalRegistries">, resolve: Resolver = systemResolver) {
    this.#trusted = new Set(config.internalRegistries.map(hostOnly));
    this.#resolve = resolve;
    this.dispatcher = new Agent({
      connect: {
        lookup: ((hostname: string, opts: { all?: boolean }, cb: (...a: unknown[]) => void) => {
          this.pin(hostname).then(
            (a) => (opts?.all ? cb(null, [a satisfies LookupAddress]) : cb(null, a.address, a.family)),
            (e: unknown) => cb(e),
          );
        }) as never,
      },
    });
  }

  /** The host's checked address: resolved and checked the first time, the same answer after. */
  pin(hostname: string): Promise<{ address: string; family: 4 | 6 }> {
    const host = hostname.replace(/^\[(.*)\]$/, "$1");
    let p = this.#pins.get(host);
    if (!p) {
      p = this.#check(host);
      this.#pins.set(host, p);
      // A failed lookup may be retried; a refusal stays (it is in the promise).
      p.catch((e: unknown) => {
        if (!(e instanceof SourceRefused)) this.#pins.delete(host);
      });
    }
    return p;
  }

  async #check(host: string): Promise<{ address: string; family: 4 | 6 }> {
    const addresses = isIP(host) ? [host] : await this.#resolve(host);
    if (addresses.length === 0) throw Object.assign(new Error(`${host} does not resolve`), { code: "ENOTFOUND" });
    if (!this.#trusted.has(host))
      for (const a of addresses) {
        const why = refusedBecause(a);
        if (why) throw new SourceRefused(`${host} is ${why} (${a})`);
      }
    const address = addresses[0] as string;
    return { address, family: isIP(address) === 6 ? 6 : 4 };
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }
}

/**
 * Why Berth will not call this registry, or null. Names that do not resolve are left to the copy to
 * report. With `pins`, the answer checked here is the address the copy connects to.
 */
export async function sourceRefusal(
  config: ImagesConfig,
  registry: string,
  resolve: Resolver = systemResolver,
  pinned?: PinnedHosts,
): Promise<string | null> {
  if (config.internalRegistries.includes(registry)) return null;
  const pins = pinned ?? new PinnedHosts(config, resolve);
  try {
    await pins.pin(hostOnly(registry));
    return null;
  } catch (e) {
    if (e instanceof SourceRefused) return e.message.replace(/^[^ ]+/, registry);
    return null;
  } finally {
    if (!pinned) await pins.close();
  }
}

export function sourceClient(
  config: ImagesConfig,
  registry: string,
  o: { timeoutMs?: number; pins?: PinnedHosts } = {},
): RegistryClient {
  const base =
    registry === DOCKER_HUB
      ? "https://registry-1.docker.io"
      : `${config.internalRegistries.includes(registry) ? "http" : "https"}://${registry}`;
  return new RegistryClient({
    baseUrl: base,
    userAgent: USER_AGENT,
    ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}),
    ...(o.pins ? { dispatcher: o.pins.dispatcher } : {}),
  });
}

export function targetClient(config: ImagesConfig, timeoutMs?: number): RegistryClient | undefined {
  const r = config.registry;
  if (!r) return undefined;
  return new RegistryClient({
    baseUrl: r.url,
    userAgent: USER_AGENT,
    ...(r.username && r.password ? { credentials: { username: r.username, password: r.password.reveal() } } : {}),
    ...(timeoutMs ? { timeoutMs } : {}),
  });
}
