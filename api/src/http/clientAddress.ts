// Who is calling: the socket's peer, or — only when that peer is a trusted proxy (BERTH_TRUSTED_PROXY_CIDRS)
// — the address the proxies forwarded in X-Forwarded-For. The header is read right to left, skipping
// trusted hops; the first untrusted address is the client. Anything a client writes into the header itself
// sits left of the address its first proxy appended, so it is never reached. No trusted ranges: the header
// is never read.
import { isIP } from "node:net";
import type { Context, Middleware } from "koa";
import { type AllowList, allowList } from "../internal/cidr.ts";

export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trusted: AllowList,
): string | undefined {
  if (!peer || !trusted.allows(peer) || !forwardedFor) return peer;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor)
    .split(",")
    .map((h) => h.trim())
    .filter(Boolean);
  let nearest = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i] as string;
    // A hop that is not an address was written by someone we cannot vouch for: the proxy that passed it on
    // is the last address we know.
    if (isIP(hop) === 0) return nearest;
    if (!trusted.allows(hop)) return hop;
    nearest = hop;
  }
  return nearest;
}

/** Sets ctx.state.clientAddress for every request (read it with clientAddressOf). */
export function clientAddressMiddleware(trustedProxyCidrs: readonly string[]): Middleware {
  const trusted = allowList(trustedProxyCidrs);
  return async (ctx, next) => {
    ctx.state.clientAddress = clientAddress(ctx.req.socket.remoteAddress, ctx.get("x-forwarded-for"), trusted);
    await next();
  };
}

/** The client's address: what clientAddressMiddleware decided, else the socket's peer. */
export function clientAddressOf(ctx: Context): string {
  return (ctx.state.clientAddress as string | undefined) ?? ctx.req.socket.remoteAddress ?? "";
}
