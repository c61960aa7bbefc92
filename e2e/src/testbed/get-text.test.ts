// The bed's readiness probe: a reply cut mid-body is a failure it can retry, not a wait for ever.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { expect, it } from "vitest";
import { getText } from "./get-text.ts";

it("fails on a reply cut off mid-body and reads a whole one", async () => {
  const server = createServer((req, res) => {
    res.writeHead(200, { "content-length": "100" });
    if (req.url === "/whole") res.end("x".repeat(100));
    else res.write("partial", () => res.socket?.destroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const cut = getText(`${base}/cut`).then(
      () => "resolved",
      (e: Error) => e.message,
    );
    expect(await Promise.race([cut, sleep(5000).then(() => "still waiting")])).toMatch(/cut off|aborted|socket/);
    expect(await getText(`${base}/whole`)).toHaveLength(100);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});
