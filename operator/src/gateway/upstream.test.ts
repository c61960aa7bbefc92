import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { addressMatcher, gatedUpstreams, parseHostPort, RouteFeedUpstreams, StaticUpstreams } from "./upstream.ts";

describe("upstream resolvers", () => {
  it("tell a real node's pod addresses from others by range (IPv4 and IPv6), and never a host name", () => {
    const direct = addressMatcher(["10.234.7.0/24", "fd00:1::/64"]);
    expect(["10.234.7.1", "10.234.7.254", "fd00:1::5"].map(direct)).toEqual([true, true, true]);
    expect(["10.234.8.1", "10.0.0.7", "127.0.0.1", "fd00:2::5", "localhost", ""].map(direct)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(addressMatcher([])("10.234.7.1")).toBe(false);
  });

  it("map sessions to fixed addresses, with * for the rest", () => {
    const u = new StaticUpstreams({ "ses-a": "127.0.0.1:7001", "*": "http://127.0.0.1:7000/" });
    expect(u.resolve("ses-a")).toEqual({ host: "127.0.0.1", port: 7001 });
    expect(u.resolve("ses-b")).toEqual({ host: "127.0.0.1", port: 7000 });
    expect(parseHostPort("[::1]:80")).toEqual({ host: "::1", port: 80 });
    expect(() => parseHostPort("nope")).toThrow();
  });

  it("gate on the pod, and remember the answer for a moment", async () => {
    let t = 0;
    let calls = 0;
    let running = true;
    const u = gatedUpstreams(
      new StaticUpstreams({ "*": "127.0.0.1:7000" }),
      async () => {
        calls++;
        return running;
      },
      {
        ttlMs: 1000,
        now: () => t,
      },
    );
    expect(await u.resolve("ses-a")).toEqual({ host: "127.0.0.1", port: 7000 });
    running = false;
    expect(await u.resolve("ses-a")).toBeDefined(); // cached
    expect(calls).toBe(1);
    t += 1000;
    expect(await u.resolve("ses-a")).toBeUndefined();
    expect(calls).toBe(2);
  });
});

describe("following the operator's route feed", () => {
  it("ends when closed while its first connection is still being opened", async () => {
    // A feed that streams forever (heartbeats), as the operator's does. close() right after start() lands
    // while the token file is read, before the connection exists; it must still end that connection.
    const dir = mkdtempSync(join(tmpdir(), "berth-upstream-"));
    const tokenFile = join(dir, "token");
    writeFileSync(tokenFile, "t\n");
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      res.write(`${JSON.stringify({ routes: { "s-a": { host: "127.0.0.1", port: 1 } } })}\n`);
      const beat = setInterval(() => res.write("\n"), 20);
      res.on("close", () => clearInterval(beat));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/routes`;
    try {
      for (let i = 0; i < 5; i++) {
        const u = new RouteFeedUpstreams({ url, tokenFile }).start();
        const closed = await Promise.race([u.close().then(() => true), sleep(3000).then(() => false)]);
        expect(closed, `close() of feed follower ${i} returned`).toBe(true);
      }
      const u = new RouteFeedUpstreams({ url, tokenFile }).start();
      await u.synced();
      const closed = await Promise.race([u.close().then(() => true), sleep(3000).then(() => false)]);
      expect(closed, "close() of a follower holding a stream returned").toBe(true);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
