// Who led when, from the soak's kept process logs (pino JSON lines): printed when sessions end stuck, to
// tell a leader change from a failed start.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Messages that say who led and when a controller started or failed to, as the processes logged them. */
const LEADERSHIP = new Set([
  "started leading",
  "stopped leading",
  "took over an expired lease",
  "lease released",
  "leader transition failed",
  "session controller started",
]);

/** The leadership story of every kept log, in time order: "12:01:03.120 worker-split-2 started leading". */
export function leadershipLines(logDir: string): string[] {
  const lines: { t: number; text: string }[] = [];
  for (const f of readdirSync(logDir).filter((x) => x.endsWith(".log"))) {
    for (const line of readFileSync(join(logDir, f), "utf8").split("\n")) {
      if (!line.startsWith("{")) continue;
      try {
        const l = JSON.parse(line) as { msg?: string; time?: number };
        if (l.msg && LEADERSHIP.has(l.msg) && typeof l.time === "number")
          lines.push({
            t: l.time,
            text: `${new Date(l.time).toISOString().slice(11, 23)} ${f.replace(/\.log$/, "")} ${l.msg}`,
          });
      } catch {}
    }
  }
  return lines.sort((a, b) => a.t - b.t).map((l) => l.text);
}
