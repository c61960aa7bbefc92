import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleContext, serveConsole } from "./console.ts";

let dist: string;
beforeAll(() => {
  dist = mkdtempSync(join(tmpdir(), "berth-console-"));
  mkdirSync(join(dist, "assets"));
  writeFileSync(join(dist, "index.html"), "<!doctype html><title>Berth</title>");
  writeFileSync(join(dist, "assets/app-1234.js"), "console.log(1)");
  writeFileSync(join(dist, "assets/app-1234.js.gz"), gzipSync("console.log(1)"));
});
afterAll(() => rmSync(dist, { recursive: true, force: true }));

function ctx(
  method: string,
  path: string,
  headers: Record<string, string> = {},
): ConsoleContext & { headers: Record<string, string> } {
  const out: Record<string, string> = {};
  return {
    method,
    path,
    status: 404,
    body: undefined,
    type: "",
    headers: out,
    get: (f) => headers[f.toLowerCase()] ?? "",
    set: (f, v) => {
      out[f] = v;
    },
  };
}

async function run(c: ConsoleContext) {
  let nextCalled = false;
  await serveConsole({ dist })(c, async () => {
    nextCalled = true;
  });
  return nextCalled;
}

describe("serving the console from the API", () => {
  it("answers index.html for deep links of the app", async () => {
    const c = ctx("GET", "/sessions/ses_abc", { accept: "text/html,application/xhtml+xml,*/*;q=0.8" });
    expect(await run(c)).toBe(false);
    expect(c.status).toBe(200);
    expect(String(c.body)).toContain("<title>Berth</title>");
    expect(c.headers["Content-Security-Policy"]).toContain("default-src 'self'");
    expect(c.headers["Cache-Control"]).toBe("no-cache");
  });

  it("serves hashed assets for a year, gzipped when the browser accepts it", async () => {
    const c = ctx("GET", "/assets/app-1234.js", { "accept-encoding": "gzip, br" });
    await run(c);
    expect(c.status).toBe(200);
    expect(c.type).toContain("javascript");
    expect(c.headers["Content-Encoding"]).toBe("gzip");
    expect(c.headers["Cache-Control"]).toContain("immutable");
  });

  it("never shadows the API, probes, metrics or the operator plane", async () => {
    for (const p of [
      "/api/v1/sessions",
      "/api",
      "/healthz",
      "/metrics",
      "/internal/connect/verify",
      "/.well-known/svc-internal-jwks.json",
    ]) {
      expect(await run(ctx("GET", p)), p).toBe(true);
    }
    expect(await run(ctx("POST", "/sessions"))).toBe(true);
  });

  it("leaves a missing file with an extension to the API's 404 and refuses to leave its folder", async () => {
    expect(await run(ctx("GET", "/assets/missing.js"))).toBe(true);
    const c = ctx("GET", "/../../etc/passwd");
    await run(c);
    expect(String(c.body)).not.toContain("root:");
  });

  it("leaves unknown paths to the API's JSON 404 for programs that do not ask for a page", async () => {
    expect(await run(ctx("GET", "/nope", { accept: "*/*" }))).toBe(true);
  });

  it("answers 304 when the browser has the same file", async () => {
    const first = ctx("GET", "/", { accept: "text/html" });
    await run(first);
    const again = ctx("GET", "/", { accept: "text/html", "if-none-match": first.headers.ETag ?? "" });
    await run(again);
    expect(again.status).toBe(304);
  });
});
