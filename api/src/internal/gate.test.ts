// The internal plane's range gate over real sockets: a forwarded address counts only when the socket's
// peer is a trusted proxy, so a header from anyone else can never open the plane.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Koa from "koa";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { internalGateMiddleware } from "./app.ts";

let server: Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

async function gate(allow: string[], trusted: string[]): Promise<string> {
  const app = new Koa();
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch {
      ctx.status = 403;
    }
  });
  app.use(internalGateMiddleware(allow, pino({ level: "silent" }), trusted));
  app.use((ctx) => {
    ctx.body = "open";
  });
  server = createServer(app.callback());
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/internal/v1/x`;
}

const from = async (url: string, forwardedFor?: string) =>
  (await fetch(url, { headers: forwardedFor ? { "x-forwarded-for": forwardedFor } : {} })).status;

describe("the internal plane's gate", () => {
  it("admits a forwarded operator address in range, from a trusted proxy", async () => {
    const url = await gate(["10.20.0.0/16"], ["127.0.0.1/32"]);
    expect(await from(url, "10.20.3.4")).toBe(200);
    expect(await from(url, "192.0.2.1")).toBe(403);
    // The proxy itself is not in the operators' range.
    expect(await from(url)).toBe(403);
  });

  it("never trusts the header from a peer outside the trusted proxies", async () => {
    const url = await gate(["10.20.0.0/16"], []);
    expect(await from(url, "10.20.3.4")).toBe(403);
  });

  it("still admits in-range peers directly", async () => {
    const url = await gate(["127.0.0.0/8"], ["10.0.0.0/8"]);
    expect(await from(url, "192.0.2.1")).toBe(200);
  });
});
