// An interrupted run must not leave the bed behind. The fleets here live in child processes (the hosts
// being interrupted), one after the other.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { isAlive, processesMentioning } from "./procfs.ts";
import { eventually } from "./waiting.test-support.ts";

interface Held {
  host: ReturnType<typeof spawn>;
  dataDir: string;
  pids: number[];
}

async function holdFleet(): Promise<Held> {
  const host = spawn(process.execPath, [join(import.meta.dirname, "fixtures", "hold-fleet.ts")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  host.stdout?.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const line = await eventually(async () => out.split("\n").find((l) => l.startsWith("{")), {
    what: "the host to report its fleet",
    timeoutMs: 120_000,
  });
  const { dataDir, pids } = JSON.parse(line) as { dataDir: string; pids: number[] };
  return { host, dataDir, pids };
}

describe("a run interrupted before it stops its fleet", () => {
  test("a host without its own handler that gets SIGINT takes its fleet and data with it", async () => {
    const held = await holdFleet();
    expect(held.pids.filter(isAlive)).toHaveLength(3);
    const hostEnded = new Promise((resolve) => held.host.once("exit", (code, signal) => resolve(signal ?? code)));
    held.host.kill("SIGINT");
    // The host removes the data before it dies of the signal; its fleet may be gone a moment earlier.
    await expect(hostEnded).resolves.toBe("SIGINT");
    await eventually(async () => held.pids.every((p) => !isAlive(p)), {
      what: "the fleet's processes to end",
      timeoutMs: 10_000,
    });
    expect(processesMentioning(held.dataDir)).toEqual([]);
    // Removed by the host before it died, or (a dying process wrote into it meanwhile) by its reaper.
    await eventually(async () => !existsSync(held.dataDir), { what: "the data to be removed", timeoutMs: 10_000 });
  });

  test("a host killed with SIGKILL is cleaned up after by the reaper within seconds", async () => {
    const held = await holdFleet();
    held.host.kill("SIGKILL");
    await eventually(async () => held.pids.every((p) => !isAlive(p)), {
      what: "the reaper to end the fleet",
      timeoutMs: 15_000,
    });
    await eventually(async () => !existsSync(held.dataDir), {
      what: "the reaper to remove the data",
      timeoutMs: 10_000,
    });
    expect(processesMentioning(held.dataDir)).toEqual([]);
  });
});
