// Source-address gate for the internal listener: closed unless CIDRs are configured.
import { BlockList, isIPv4, isIPv6 } from "node:net";
import type { Middleware } from "koa";
import { DomainError } from "../errors.ts";

export function allowList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [net, bits] = cidr.split("/");
    list.addSubnet(net!, Number(bits), isIPv6(net!) ? "ipv6" : "ipv4");
  }
  return list;
}

export function isAllowed(list: BlockList, address: string): boolean {
  const a = address.startsWith("::ffff:") && isIPv4(address.slice(7)) ? address.slice(7) : address;
  if (isIPv4(a)) return list.check(a, "ipv4");
  if (isIPv6(a)) return list.check(a, "ipv6");
  return false;
}

/** Refuses (403 forbidden) any peer outside the configured ranges; uses the socket's address, not headers. */
export function sourceNetworkMiddleware(cidrs: readonly string[]): Middleware {
  const list = allowList(cidrs);
  return async (ctx, next) => {
    const peer = ctx.req.socket.remoteAddress ?? "";
    if (!isAllowed(list, peer)) throw new DomainError("forbidden", "the internal plane is not open to this network");
    await next();
  };
}
