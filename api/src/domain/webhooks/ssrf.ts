// The guard against server-side request forgery: a webhook may only call the public internet, unless an
// operator trusts an internal host (BERTH_WEBHOOK_ALLOW_HOSTS: host names, addresses or CIDRs). The name
// is resolved and *every* address checked (one bad address refuses the URL), at creation and again before
// every delivery (DNS can change); the dispatcher then connects to the address checked here, so a second
// lookup cannot swap it (DNS rebinding). Redirects are never followed (dispatcher.ts).
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { DomainError } from "../../errors.ts";

export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

const V4_RANGES: [string, string, number][] = [
  ["unspecified", "0.0.0.0", 8],
  ["private", "10.0.0.0", 8],
  ["carrier-grade NAT", "100.64.0.0", 10],
  ["loopback", "127.0.0.0", 8],
  ["link-local", "169.254.0.0", 16],
  ["private", "172.16.0.0", 12],
  ["reserved", "192.0.0.0", 24],
  ["documentation", "192.0.2.0", 24],
  ["private", "192.168.0.0", 16],
  ["benchmarking", "198.18.0.0", 15],
  ["documentation", "198.51.100.0", 24],
  ["documentation", "203.0.113.0", 24],
  ["multicast", "224.0.0.0", 4],
  ["reserved", "240.0.0.0", 4],
];
const V6_RANGES: [string, string, number][] = [
  ["loopback", "::1", 128],
  ["unspecified", "::", 128],
  ["IPv4-mapped", "::ffff:0:0", 96],
  ["IPv4-compatible", "::", 96],
  ["IPv4-translated (NAT64)", "64:ff9b::", 96],
  ["IPv4-embedded (6to4)", "2002::", 16],
  ["link-local", "fe80::", 10],
  ["unique-local", "fc00::", 7],
  ["multicast", "ff00::", 8],
  ["documentation", "2001:db8::", 32],
];

// Per family, and each address checked against its own family's rules only: a BlockList treats IPv4
// addresses as IPv4-mapped IPv6 ones (so ::ffff:0:0/96 would match every IPv4 address) and the reverse.
const rules = {
  4: V4_RANGES.map(([reason, net, prefix]) => ({ reason, list: subnet(net, prefix, "ipv4") })),
  6: V6_RANGES.map(([reason, net, prefix]) => ({ reason, list: subnet(net, prefix, "ipv6") })),
};

function subnet(net: string, prefix: number, family: "ipv4" | "ipv6"): BlockList {
  const b = new BlockList();
  b.addSubnet(net, prefix, family);
  return b;
}

/** Why an address must not be called, or null for a public one. */
export function refusedBecause(address: string): string | null {
  const v = isIP(address);
  if (v === 0) return "not an IP address";
  const family = v === 4 ? "ipv4" : "ipv6";
  for (const r of rules[v === 4 ? 4 : 6]) if (r.list.check(address, family)) return r.reason;
  return null;
}

/** A parsed allowlist: host names (exact, case-insensitive) and addresses or CIDRs. */
export class Allowlist {
  readonly #names = new Set<string>();
  readonly #nets = new BlockList();
  constructor(entries: readonly string[]) {
    for (const raw of entries) {
      const e = raw.trim().toLowerCase();
      if (e === "") continue;
      const [addr, prefix] = e.split("/") as [string, string | undefined];
      const v = isIP(addr);
      if (v === 0) this.#names.add(e);
      else if (prefix === undefined) this.#nets.addAddress(addr, v === 4 ? "ipv4" : "ipv6");
      else this.#nets.addSubnet(addr, Number(prefix), v === 4 ? "ipv4" : "ipv6");
    }
  }
  admitsName(hostname: string): boolean {
    return this.#names.has(hostname.toLowerCase());
  }
  admitsAddress(address: string): boolean {
    const v = isIP(address);
    return v !== 0 && this.#nets.check(address, v === 4 ? "ipv4" : "ipv6");
  }
}

export interface CheckedTarget {
  url: URL;
  /** The host as written, brackets stripped (SNI and the Host header use it). */
  hostname: string;
  /** The address to connect to: one that was checked. */
  address: string;
  family: 4 | 6;
}

const MAX_URL_LENGTH = 2048;

/** Parses a webhook URL: https, a host, no credentials. Throws 400 webhook_url_invalid. */
export function parseWebhookUrl(raw: string): URL {
  const bad = (reason: string) =>
    new DomainError("webhook_url_invalid", `the webhook URL ${reason}`, { url: raw, reason });
  if (raw.length > MAX_URL_LENGTH) throw bad(`is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad("does not parse as an absolute URL");
  }
  if (url.protocol !== "https:") throw bad("must use https");
  if (url.username !== "" || url.password !== "") throw bad("must not carry a user name or password");
  if (url.hostname === "") throw bad("has no host");
  return url;
}

export class WebhookGuard {
  readonly #allow: Allowlist;
  readonly #resolve: Resolver;
  constructor(o: { allowHosts: readonly string[]; resolve?: Resolver }) {
    this.#allow = new Allowlist(o.allowHosts);
    this.#resolve = o.resolve ?? systemResolver;
  }

  /** Parses, resolves and checks every address; throws webhook_url_invalid or webhook_target_forbidden. */
  async check(raw: string): Promise<CheckedTarget> {
    const url = parseWebhookUrl(raw);
    const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
    const refuse = (reason: string, address?: string) =>
      new DomainError(
        "webhook_target_forbidden",
        `the webhook URL's host ${hostname} ${address ? `resolves to ${address}, ${reason}` : reason}`,
        { host: hostname, ...(address ? { address } : {}), reason },
      );
    let addresses: string[];
    if (isIP(hostname) !== 0) addresses = [hostname];
    else {
      try {
        addresses = await this.#resolve(hostname);
      } catch {
        throw refuse("does not resolve");
      }
      if (addresses.length === 0) throw refuse("does not resolve");
    }
    const trustedName = this.#allow.admitsName(hostname);
    for (const a of addresses) {
      if (trustedName || this.#allow.admitsAddress(a)) continue;
      const why = refusedBecause(a);
      if (why !== null) throw refuse(`a ${why} address`, a);
    }
    const address = addresses[0] as string;
    return { url, hostname, address, family: isIP(address) === 6 ? 6 : 4 };
  }
}
