import { describe, expect, it } from "vitest";

describe("the toolchain", () => {
  it("runs on Node 24 with argon2 in node:crypto", async () => {
    expect(Number(process.versions.node.split(".")[0])).toBe(24);
    const { argon2Sync } = await import("node:crypto");
    expect(typeof argon2Sync).toBe("function");
  });
});
