// The internal plane's source-range gate. Node's BlockList does the matching (IPv4, IPv6, and IPv4
// peers seen as `::ffff:a.b.c.d` on a dual-stack socket match IPv4 ranges); this file parses the
// configuration strictly so that a typo closes nothing silently.
import { BlockList, isIP } from "node:net";

export class CidrError extends Error {}

export interface AllowList {
  readonly cidrs: readonly string[];
  allows(address: string | undefined): boolean;
}

export function parseCidr(cidr: string): { network: string; prefix: number; family: "ipv4" | "ipv6" } {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(cidr.trim());
  if (!m?.[1] || !m[2]) throw new CidrError(`${cidr} is not a CIDR (address/prefix)`);
  const network = m[1];
  const prefix = Number(m[2]);
  const v = isIP(network);
  if (v === 0) throw new CidrError(`${cidr}: ${network} is not an IP address`);
  const max = v === 4 ? 32 : 128;
  if (prefix > max) throw new CidrError(`${cidr}: prefix must be at most ${max}`);
  return { network, prefix, family: v === 4 ? "ipv4" : "ipv6" };
}

export function allowList(cidrs: readonly string[]): AllowList {
  const list = new BlockList();
  for (const c of cidrs) {
    const { network, prefix, family } = parseCidr(c);
    list.addSubnet(network, prefix, family);
  }
  return {
    cidrs: [...cidrs],
    allows(address) {
      if (!address) return false;
      // Zone ids (fe80::1%eth0) are not part of the address BlockList compares.
      const bare = address.replace(/%.*$/, "");
      const v = isIP(bare);
      if (v === 0) return false;
      const mapped = /^::ffff:(\d{1,3}(\.\d{1,3}){3})$/i.exec(bare);
      if (mapped?.[1]) return list.check(mapped[1], "ipv4") || list.check(bare, "ipv6");
      return list.check(bare, v === 4 ? "ipv4" : "ipv6");
    },
  };
}
