// The addresses an import connects to are the ones checked: each host resolved once per import (DNS
// rebinding cannot swap it afterwards), internal addresses refused unless the registry is trusted.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PinnedHosts, SourceRefused, sourceRefusal } from "./sources.ts";

/** A resolver whose answers change from call to call, as a rebinding name's do. */
function rebinding(...answers: string[][]) {
  const calls: string[] = [];
  const resolve = async (host: string) => {
    calls.push(host);
    return answers[Math.min(calls.length - 1, answers.length - 1)] as string[];
  };
  return { resolve, calls };
}

const config = (internalRegistries: string[] = []) => ({ internalRegistries }) as never;

describe("an import's pinned hosts", () => {
  let server: ReturnType<typeof createServer>;
  let port = 0;
  let hits = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      hits++;
      res.writeHead(200, { connection: "close" }).end("{}");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("connect every request to the address resolved first, whatever the name says later", async () => {
    // Trusted (as BERTH_IMAGE_INTERNAL_REGISTRIES would), so loopback is allowed; the name then re-points.
    const dns = rebinding(["127.0.0.1"], ["10.66.0.1"]);
    const pins = new PinnedHosts(config([`mirror.rebind.test:${port}`]), dns.resolve);
    try {
      for (let i = 0; i < 3; i++) {
        const r = await fetch(`http://mirror.rebind.test:${port}/v2/`, { dispatcher: pins.dispatcher });
        expect(r.status).toBe(200);
        await r.text();
      }
    } finally {
      await pins.close();
    }
    expect(hits).toBe(3);
    expect(dns.calls).toEqual(["mirror.rebind.test"]);
  });

  it("keep the checked public address when the name later resolves to loopback", async () => {
    const dns = rebinding(["93.184.216.34"], ["127.0.0.1"]);
    const pins = new PinnedHosts(config(), dns.resolve);
    try {
      expect(await sourceRefusal(config(), "registry.rebind.test", dns.resolve, pins)).toBeNull();
      expect(await pins.pin("registry.rebind.test")).toEqual({ address: "93.184.216.34", family: 4 });
      expect(dns.calls).toHaveLength(1);
    } finally {
      await pins.close();
    }
  });

  it("refuse a host that resolves to an internal address, and the connection to it", async () => {
    const dns = rebinding(["127.0.0.1"]);
    expect(await sourceRefusal(config(), "evil.rebind.test", dns.resolve)).toMatch(
      /^evil\.rebind\.test is .*127\.0\.0\.1/,
    );
    const pins = new PinnedHosts(config(), dns.resolve);
    try {
      await expect(pins.pin("evil.rebind.test")).rejects.toBeInstanceOf(SourceRefused);
      const err = await fetch(`http://evil.rebind.test:${port}/v2/`, { dispatcher: pins.dispatcher }).catch((e) => e);
      expect((err as { cause?: { code?: string } }).cause?.code).toBe("EBERTHFORBIDDEN");
    } finally {
      await pins.close();
    }
    expect(hits).toBe(3);
  });
});
