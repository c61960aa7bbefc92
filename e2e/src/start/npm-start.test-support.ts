// What the journeys that run `npm start`'s own process share: the processes it left (found by its data
// folder, which every one of them names), stopping all of it, and a JSON call to its API.
import { type ChildProcess, execFileSync } from "node:child_process";
import { rmSync } from "node:fs";

/** Processes still running that name the data folder (pgrep exits 1 when nothing matches). */
export function leftoversOf(dataDir: string): string[] {
  try {
    return execFileSync("pgrep", ["-f", dataDir]).toString().trim().split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

/** Kills npm start's process group and whatever else names its data folder, then removes the folder. */
export function stopNpmStart(child: ChildProcess | undefined, dataDir: string): void {
  if (child && child.exitCode === null && child.pid) {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {}
  }
  for (const pid of leftoversOf(dataDir)) {
    try {
      process.kill(Number(pid), "SIGKILL");
    } catch {}
  }
  rmSync(dataDir, { recursive: true, force: true });
}
