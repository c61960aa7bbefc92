import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StubControlPlane, startStubControlPlane } from "../testing/stub-control-plane.test-support.ts";
import { InternalClient, retryDelay } from "./client.ts";

let stub: StubControlPlane;
let dir: string;
beforeAll(async () => {
  stub = await startStubControlPlane({ tokens: { good: "clu_a", other: "clu_b" } });
  dir = mkdtempSync(join(tmpdir(), "berth-op-client-"));
});
afterAll(async () => {
  await stub.close();
  rmSync(dir, { recursive: true, force: true });
});

const report = { cluster_id: "clu_a", observed_at: "2026-11-22T06:00:00.000Z", nodes: [] };

function tokenFile(name: string, token: string): string {
  const path = join(dir, name);
  // The way a Secret volume updates: write aside, rename over.
  writeFileSync(`${path}.tmp`, `${token}\n`);
  renameSync(`${path}.tmp`, path);
  return path;
}

describe("InternalClient", () => {
  it("reads the token file on every attempt, so a replaced file is used at once", async () => {
    const path = tokenFile("token", "stale");
    const client = new InternalClient({ baseUrl: stub.url, tokenFile: path, timeoutMs: 10_000 });
    const first = await client.call("PUT", "/internal/v1/inventory", report);
    expect(first).toMatchObject({
      ok: false,
      kind: "unauthorized",
      status: "401",
      code: "token_expired",
      message: "the operator token has expired",
    });
    tokenFile("token", "good");
    expect(await client.call("PUT", "/internal/v1/inventory", report)).toMatchObject({
      ok: true,
      status: 200,
      body: { accepted: 0 },
    });
    expect(stub.requests.slice(-2).map((r) => r.token)).toEqual(["stale", "good"]);
  });

  it("tells a 403 for another cluster's report apart", async () => {
    const client = new InternalClient({ baseUrl: stub.url, tokenFile: tokenFile("t403", "other"), timeoutMs: 10_000 });
    expect(await client.call("PUT", "/internal/v1/inventory", report)).toMatchObject({
      ok: false,
      kind: "forbidden",
      code: "forbidden",
    });
  });

  it("a missing token file, a 5xx and an unreachable control plane are outcomes, not exceptions", async () => {
    const missing = new InternalClient({ baseUrl: stub.url, tokenFile: join(dir, "absent"), timeoutMs: 10_000 });
    expect(await missing.call("PUT", "/internal/v1/inventory", report)).toMatchObject({ ok: false, kind: "no_token" });
    stub.failWith(503);
    const client = new InternalClient({ baseUrl: stub.url, tokenFile: tokenFile("t5xx", "good"), timeoutMs: 10_000 });
    expect(await client.call("PUT", "/internal/v1/inventory", report)).toMatchObject({
      ok: false,
      kind: "unavailable",
      status: "503",
    });
    stub.failWith(undefined);
    const nowhere = new InternalClient({
      baseUrl: "http://127.0.0.1:1",
      tokenFile: tokenFile("tnet", "good"),
      timeoutMs: 10_000,
    });
    expect(await nowhere.call("PUT", "/internal/v1/inventory", report)).toMatchObject({
      ok: false,
      kind: "unavailable",
      status: "network",
    });
  });
});

describe("retryDelay", () => {
  const policy = { baseMs: 100, maxMs: 10_000, jitter: 0 };
  it("backs off exponentially on 401 and transient failures", () => {
    const unauthorized = { ok: false as const, kind: "unauthorized" as const, status: "401", message: "" };
    expect([1, 2, 3].map((n) => retryDelay(unauthorized, n, policy))).toEqual([100, 200, 400]);
  });
  it("waits the cap after a 403 or a rejected body, from the first failure on", () => {
    const forbidden = { ok: false as const, kind: "forbidden" as const, status: "403", message: "" };
    const rejected = { ok: false as const, kind: "rejected" as const, status: "400", message: "" };
    expect(retryDelay(forbidden, 1, policy)).toBe(10_000);
    expect(retryDelay(rejected, 1, policy)).toBe(10_000);
  });
});
