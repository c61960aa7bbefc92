import { describe, expect, it } from "vitest";
import { DEFAULT_ARGON2, PasswordHasher } from "./password.ts";

describe("argon2id password hashes", () => {
  const hasher = new PasswordHasher();

  it("are PHC strings carrying their parameters, with a fresh salt each time", async () => {
    const a = await hasher.hash("correct horse battery staple");
    const b = await hasher.hash("correct horse battery staple");
    expect(a).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(a).not.toBe(b);
  });

  it("verify the right password only, and never throw on a garbled hash", async () => {
    const h = await hasher.hash("correct horse battery staple");
    expect(await hasher.verify(h, "correct horse battery staple")).toBe(true);
    expect(await hasher.verify(h, "Correct horse battery staple")).toBe(false);
    expect(await hasher.verify("not a hash", "anything")).toBe(false);
    expect(await hasher.verifyDummy("anything")).toBe(false);
  });

  it("say when they were made with other parameters (re-hashed at the next sign-in)", async () => {
    const stronger = new PasswordHasher({ ...DEFAULT_ARGON2, passes: 3 });
    const h = await hasher.hash("pw pw pw pw pw");
    expect(hasher.needsRehash(h)).toBe(false);
    expect(stronger.needsRehash(h)).toBe(true);
    expect(await stronger.verify(h, "pw pw pw pw pw")).toBe(true);
  });

  it("refuse parameters below the floor (19 MiB, 2 passes, 1 lane)", () => {
    expect(() => new PasswordHasher({ ...DEFAULT_ARGON2, memoryKiB: 8192 })).toThrow(/floor/);
    expect(() => new PasswordHasher({ ...DEFAULT_ARGON2, passes: 1 })).toThrow(/floor/);
    expect(() => new PasswordHasher({ ...DEFAULT_ARGON2, parallelism: 2 })).toThrow(/floor/);
  });
});
