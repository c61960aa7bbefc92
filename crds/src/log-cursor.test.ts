import { describe, expect, it } from "vitest";
import { BuildLogBatch, LogCursor, normalizeLogStamp } from "./internal-plane.ts";

describe("a build log's cursor", () => {
  it("compares kubelet timestamps with all nine fraction digits", () => {
    expect(normalizeLogStamp("2026-11-26T10:00:00.1234Z")).toBe("2026-11-26T10:00:00.123400000Z");
    expect(normalizeLogStamp("2026-11-26T10:00:00Z")).toBe("2026-11-26T10:00:00.000000000Z");
    expect(
      `${normalizeLogStamp("2026-11-26T10:00:00.1234Z")}` > `${normalizeLogStamp("2026-11-26T10:00:00.12345Z")}`,
    ).toBe(false);
    // A node that writes its own offset: the same instant, compared in UTC.
    expect(normalizeLogStamp("2026-11-26T19:00:00.5+09:00")).toBe("2026-11-26T10:00:00.500000000Z");
  });

  it("refuses a batch whose line carries no timestamp (it would move the cursor past every later line)", () => {
    const batch = (at: string) =>
      BuildLogBatch.safeParse({
        cluster_id: "clu_aaaaaaaaaaaaaaaa",
        build: "bld-aaaaaaaaaaaaaaaaaaaa",
        lines: [{ at, text: "x" }],
      });
    expect(batch("zzz").success).toBe(false);
    expect(batch("2026-11-26 10:00:00").success).toBe(false);
    // Shaped like one, but no such instant: refused too (it threw, a 500 on the internal plane).
    expect(normalizeLogStamp("2026-13-45T99:00:00Z")).toBeNull();
    expect(batch("2026-13-45T99:00:00Z").success).toBe(false);
    expect(batch("2026-11-26T10:00:00.123456789Z").success).toBe(true);
  });

  it("admits each line once when a log is read again from an earlier point, lines sharing a timestamp included", () => {
    const log = [
      ["2026-11-26T10:00:00.5Z", "a"],
      ["2026-11-26T10:00:01Z", "b"],
      ["2026-11-26T10:00:01Z", "c"],
      ["2026-11-26T10:00:02Z", "d"],
    ] as const;
    const cursor = new LogCursor();
    const first = cursor.reader();
    expect(log.slice(0, 2).filter(([at]) => first(at))).toHaveLength(2);
    // Read again from the start (a re-followed stream): only what is past the cursor.
    const again = cursor.reader();
    expect(log.filter(([at]) => again(at)).map(([, t]) => t)).toEqual(["c", "d"]);
    // And again from the cursor's second (sinceTime has whole seconds): nothing new.
    const third = cursor.reader();
    expect(log.slice(1).filter(([at]) => third(at))).toEqual([]);
    expect({ at: cursor.at, n: cursor.n }).toEqual({ at: "2026-11-26T10:00:02.000000000Z", n: 1 });
    // A line without a timestamp is passed over and leaves the cursor where it was.
    expect(cursor.reader()("no-stamp")).toBe(false);
    expect({ at: cursor.at, n: cursor.n }).toEqual({ at: "2026-11-26T10:00:02.000000000Z", n: 1 });
  });
});
