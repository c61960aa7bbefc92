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

/** A JSON call to the API at `base`; the body is parsed when it is JSON. */
export async function callApi(base: string, token: string | null, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  // biome-ignore lint/suspicious/noExplicitAny: journeys read the API's JSON as it comes
  return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
}
