import { describe, expect, it } from "vitest";
import { connectPath, connectUrl } from "./links.ts";
import { CONNECT_TOKEN_BYTES, hashConnectToken, isConnectTokenShaped, newConnectToken, redactToken } from "./token.ts";

describe("connect tokens", () => {
  it("carry at least 128 random bits, prefixed cnx_", () => {
    const t = newConnectToken();
    expect(t.startsWith("cnx_")).toBe(true);
    expect(Buffer.from(t.slice(4), "base64url").length * 8).toBe(CONNECT_TOKEN_BYTES * 8);
    expect(CONNECT_TOKEN_BYTES * 8).toBeGreaterThanOrEqual(128);
  });

  it("never repeat", () => {
    const seen = new Set(Array.from({ length: 10_000 }, newConnectToken));
    expect(seen.size).toBe(10_000);
  });

  it("are recognised by shape, and anything else is not", () => {
    expect(isConnectTokenShaped(newConnectToken())).toBe(true);
    for (const bad of [
      "",
      "cnx_",
      "cnx_short",
      `xyz_${"a".repeat(43)}`,
      `cnx_${"a".repeat(44)}`,
      `cnx_${"a".repeat(42)}=`,
    ]) {
      expect(isConnectTokenShaped(bad)).toBe(false);
    }
  });

  it("hash to 32 bytes, and the redacted form does not contain the token", () => {
    const t = newConnectToken();
    expect(hashConnectToken(t)).toHaveLength(32);
    expect(redactToken(t)).not.toContain(t.slice(4, 12));
  });
});

describe("connect links", () => {
  it("live on the cluster's own session domain, one per application", () => {
    expect(connectPath("s-abc", "lab")).toBe("/proxy/s-abc/lab");
    expect(connectPath("s-abc", "terminal")).toBe("/proxy/s-abc/terminal");
    expect(connectPath("s-abc", "code")).toBe("/proxy/s-abc/code/");
    const u = new URL(connectUrl("127.0.0.1:9443", "s-abc", "code", "cnx_x"));
    expect(u.origin).toBe("https://127.0.0.1:9443");
    expect(u.pathname).toBe("/proxy/s-abc/code/");
    expect(u.searchParams.get("svc_cnx")).toBe("cnx_x");
  });
});
