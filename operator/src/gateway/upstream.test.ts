import { describe, expect, it } from "vitest";
import { gatedUpstreams, parseHostPort, StaticUpstreams } from "./upstream.ts";

describe("upstream resolvers", () => {
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
