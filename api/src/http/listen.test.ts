import { createServer, get } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { closeServer } from "./listen.ts";

describe("closing a listener", () => {
  it("cuts a stream that never ends once the grace is over, instead of waiting on it for ever", async () => {
    // As a followed pod log or a running build's log: headers, then a line now and then, never an end.
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("first line\n");
      const beat = setInterval(() => res.write("."), 20);
      res.on("close", () => clearInterval(beat));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    let opened: () => void = () => {};
    const open = new Promise<void>((r) => {
      opened = r;
    });
    const cut = new Promise<void>((resolve, reject) => {
      get({ host: "127.0.0.1", port, path: "/logs" }, (res) => {
        res.once("data", () => opened());
        res.on("data", () => {});
        res.on("close", () => resolve());
      }).on("error", reject);
    });
    await open;
    const closed = await Promise.race([closeServer(server, 200).then(() => true), sleep(3000).then(() => false)]);
    server.closeAllConnections();
    expect(closed, "closeServer returned with a stream open").toBe(true);
    await cut;
  });
});
