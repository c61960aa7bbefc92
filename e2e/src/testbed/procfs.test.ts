import { describe, expect, it } from "vitest";
import { peakRssBytes, rssBytes } from "./procfs.ts";

describe.runIf(process.platform === "linux")("a process's memory from /proc", () => {
  it("is its resident set and the peak of it, never below it", () => {
    const rss = rssBytes(process.pid);
    expect(rss).toBeGreaterThan(0);
    expect(peakRssBytes(process.pid)).toBeGreaterThanOrEqual(rss);
  });

  it("is 0 for a process that is gone", () => {
    // Above the kernel's pid_max (at most 2^22): never a live process.
    expect(rssBytes(2 ** 23)).toBe(0);
    expect(peakRssBytes(2 ** 23)).toBe(0);
  });
});
