// The soak's reading of its kept logs: who led and when, across every process, in time order.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { leadershipLines } from "./soak-leadership.ts";

const dir = mkdtempSync(join(tmpdir(), "berth-soak-logs-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the soak's leadership story", () => {
  it("takes the leadership messages of every log, in time order, and nothing else", () => {
    const at = (s: number) => Date.parse("2026-11-29T10:00:00.000Z") + s * 1000;
    const line = (msg: string, s: number) => JSON.stringify({ level: 30, time: at(s), msg });
    writeFileSync(
      join(dir, "worker-worker-split-1.log"),
      [line("started leading", 0), line("session controller started", 1), line("reconcile done", 2), "not json"].join(
        "\n",
      ),
    );
    writeFileSync(join(dir, "worker-worker-split-2.log"), `${line("took over an expired lease", 30)}\n{broken`);
    writeFileSync(join(dir, "notes.txt"), line("started leading", 5));
    expect(leadershipLines(dir)).toEqual([
      "10:00:00.000 worker-worker-split-1 started leading",
      "10:00:01.000 worker-worker-split-1 session controller started",
      "10:00:30.000 worker-worker-split-2 took over an expired lease",
    ]);
  });
});
