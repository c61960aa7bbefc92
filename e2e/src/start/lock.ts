// One `npm start` per clone: a pid file, taken atomically (O_EXCL). A file whose pid is dead, or now
// belongs to another program, is stale and taken over.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";

export type LockResult = { acquired: true; release: () => void } | { acquired: false; holder: number };

export function acquirePidLock(file: string, marker: string): LockResult {
  mkdirSync(dirname(file), { recursive: true });
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, "wx");
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return {
        acquired: true,
        release: () => {
          if (readPid(file) === process.pid) rmSync(file, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const holder = readPid(file);
    if (holder !== undefined && holder !== process.pid && isOurs(holder, marker)) return { acquired: false, holder };
    rmSync(file, { force: true }); // stale: its process is gone (or the pid was reused by another program)
  }
  throw new Error(`could not take ${file}`);
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, "utf8").trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Alive, and its command line still names `marker` (our entry point). */
function isOurs(pid: number, marker: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker);
  } catch {
    return true; // no /proc: trust kill(0)
  }
}
