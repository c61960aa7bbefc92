import { describe, expect, it } from "vitest";
import { buildResourceName, newSessionId, SESSION_ID, sessionIdFromSeed } from "./names.ts";

describe("session ids", () => {
  it("are fresh each time, or the same for one Idempotency-Key claim, and always well formed", () => {
    expect(newSessionId()).not.toBe(newSessionId());
    const seed = "usr_1 POST /api/v1/sessions\nkey-1\n2026-11-26T12:00:00.000Z";
    expect(sessionIdFromSeed(seed)).toBe(sessionIdFromSeed(seed));
    expect(sessionIdFromSeed(seed)).not.toBe(sessionIdFromSeed(`${seed}x`));
    for (let i = 0; i < 2000; i++) {
      expect(sessionIdFromSeed(`seed ${i}`)).toMatch(SESSION_ID);
      expect(newSessionId()).toMatch(SESSION_ID);
    }
  });
});

describe("build resource names", () => {
  it("are build- and the id's tail, a name Kubernetes takes", () => {
    expect(buildResourceName("bld-8c1x0p2q3r4s")).toBe("build-8c1x0p2q3r4s");
  });
});
