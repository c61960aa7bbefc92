import { existsSync } from "node:fs";
import { afterAll, describe, expect, test } from "vitest";
import { ComponentStartError } from "./cluster.ts";
import { startFleet } from "./fleet.ts";
import { processesMentioning } from "./procfs.ts";
import type { Fleet } from "./types.ts";

let fleet: Fleet | undefined;

afterAll(async () => {
  await fleet?.stop(); // only if the start wrongly succeeded
});

describe("a fleet whose component dies during start", () => {
  test("startFleet rejects with the last lines of that component's log and stops everything it started", async () => {
    const failure = await startFleet({
      clusters: [
        { name: "healthy", kind: "management" },
        {
          name: "broken",
          kind: "gpu",
          nodes: [{ name: "n1", gpuModel: "NVIDIA-L4", gpuCount: 4 }],
          extraArgs: { "kube-scheduler": ["--no-such-flag"] },
        },
      ],
    }).then(
      (f) => {
        fleet = f;
        return undefined;
      },
      (err: unknown) => err,
    );

    expect(failure).toBeInstanceOf(ComponentStartError);
    const err = failure as ComponentStartError;
    expect(err.cluster).toBe("broken");
    expect(err.component).toBe("kube-scheduler");
    expect(err.message).toContain("unknown flag: --no-such-flag");
    expect(err.logTail.split("\n").length).toBeLessThanOrEqual(20);

    // The message names the log file inside the fleet's temporary folder.
    const dataDir = /(\S+)\/broken\/logs\/kube-scheduler\.log/.exec(err.message)?.[1] ?? "";
    expect(dataDir).toContain("berth-fleet-");
    expect(processesMentioning(dataDir)).toEqual([]);
    expect(existsSync(dataDir)).toBe(false);
  });
});
