// Child processes of the test bed: each one leads its own process group (spawned `detached`), writes
// stdout and stderr to a log file, and is stopped with SIGTERM to the group, then SIGKILL after a grace.
//
// Three layers make sure nothing outlives the run:
// 1. `stop()` from the caller (fleet.stop(), afterAll).
// 2. This process's 'exit' event and SIGINT/SIGTERM/SIGHUP: every live group gets SIGKILL (synchronous;
//    the data is throw-away). When nobody else listens for the signal we re-raise it afterwards, so a
//    script without its own handler still dies of Ctrl-C as it would have.
// 3. A reaper: one small `sh` per host process, in its own session, that polls our pid and kills the
//    groups listed in a file when we vanish without running any handler (SIGKILL, a vitest worker torn
//    down hard). The file lists only live groups, so a normal exit leaves it empty.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves with the exit code (or signal name) when the process has exited. */
  readonly exited: Promise<number | string>;
  hasExited(): boolean;
  /** SIGTERM to the process group, SIGKILL after `graceMs`; resolves once the leader has exited. */
  stop(graceMs?: number): Promise<void>;
  /** The last `lines` lines of its log. */
  tail(lines?: number): string;
}

export interface SpawnOptions {
  name: string;
  command: string;
  args: readonly string[];
  logFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

const live = new Map<number, ManagedProcess>();
const removeOnDeath = new Set<string>();
let reaperFile: string | undefined;

export function spawnManaged(opts: SpawnOptions): ManagedProcess {
  installCleanup();
  const fd = openSync(opts.logFile, "a");
  let child: ChildProcess;
  try {
    child = spawn(opts.command, opts.args, {
      detached: true, // own session and process group: kill(-pid) reaches it and nothing of ours
      stdio: ["ignore", fd, fd],
      env: opts.env ?? process.env,
      cwd: opts.cwd,
    });
  } finally {
    closeSync(fd);
  }
  child.unref(); // a forgotten fleet must not keep the host alive; the 'exit' hook then kills it
  const pid = child.pid;
  let done = false;
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => {
      done = true;
      live.delete(pid ?? -1);
      writeReaperFile();
      resolve(code ?? signal ?? "unknown");
    });
    child.once("error", (err) => {
      done = true;
      live.delete(pid ?? -1);
      writeReaperFile();
      resolve(`spawn error: ${err.message}`);
    });
  });
  if (pid === undefined) {
    // spawn failed synchronously (binary missing): report it as a process that exited at once
    return {
      name: opts.name,
      pid: -1,
      logFile: opts.logFile,
      exited,
      hasExited: () => true,
      stop: async () => {},
      tail: () => `could not start ${opts.command}`,
    };
  }
  const proc: ManagedProcess = {
    name: opts.name,
    pid,
    logFile: opts.logFile,
    exited,
    hasExited: () => done,
    stop: async (graceMs = 5000) => {
      if (done) return; // (no signal to a group id that may since belong to someone else)
      killGroup(pid, "SIGTERM");
      // A ref'd timer: the children are unref'd, so without it a host with nothing else to do would
      // exit in the middle of stop() (and its 'exit' hook would SIGKILL the rest).
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<"timeout">((r) => {
        timer = setTimeout(r, graceMs, "timeout");
      });
      const outcome = await Promise.race([exited, grace]);
      clearTimeout(timer);
      if (outcome === "timeout") {
        killGroup(pid, "SIGKILL");
        const keepAlive = setInterval(() => {}, 1000);
        await exited;
        clearInterval(keepAlive);
      }
      killGroup(pid, "SIGKILL"); // stragglers in the group, if any (a pgid is not reused while it has members)
    },
    tail: (lines = 20) => tailFile(opts.logFile, lines),
  };
  live.set(pid, proc);
  writeReaperFile();
  return proc;
}

/** Pids of every process group this host process currently runs through spawnManaged. */
export function livePids(): number[] {
  return [...live.keys()];
}

/** A folder the reaper deletes if this process dies without cleaning up (temp data of a fleet). */
export function removeIfOrphaned(dir: string, on: boolean): void {
  if (on) removeOnDeath.add(dir);
  else removeOnDeath.delete(dir);
  writeReaperFile();
}

export function tailFile(file: string, lines: number): string {
  try {
    const text = readFileSync(file, "utf8");
    return text.trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: already gone
  }
}

let installed = false;
function installCleanup(): void {
  if (installed) return;
  installed = true;
  const killAll = () => {
    for (const pid of live.keys()) killGroup(pid, "SIGKILL");
    live.clear();
    // A process SIGKILLed a moment ago may still add a file while the folder is walked (ENOTEMPTY);
    // what cannot be removed now stays in the reaper's file, and the reaper removes it after we die.
    for (const dir of removeOnDeath) {
      try {
        rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
        removeOnDeath.delete(dir);
      } catch {
        // left to the reaper
      }
    }
    if (removeOnDeath.size > 0) writeReaperFile();
    else if (reaperFile) rmSync(reaperFile, { force: true });
  };
  process.on("exit", killAll);
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    const onSignal = () => {
      // Someone else handles this signal (npm start's main, vitest): they call stop() and exit, and
      // the 'exit' hook covers whatever is left. Alone, we clean up and die of the signal as usual.
      if (process.listenerCount(sig) > 1) return;
      killAll();
      process.removeListener(sig, onSignal);
      process.kill(process.pid, sig);
    };
    process.on(sig, onSignal);
  }
  startReaper();
}

function startReaper(): void {
  reaperFile = join(tmpdir(), `berth-testbed-reaper-${process.pid}`);
  writeFileSync(reaperFile, "");
  // Lines are "g <pgid>" (kill the group) or "d <dir>" (remove the folder).
  const script = `
f="$2"
while kill -0 "$1" 2>/dev/null; do sleep 1; done
[ -s "$f" ] || { rm -f "$f"; exit 0; }
while read -r k v; do [ "$k" = g ] && kill -TERM "-$v" 2>/dev/null; done < "$f"
sleep 3
while read -r k v; do [ "$k" = g ] && kill -KILL "-$v" 2>/dev/null; done < "$f"
while read -r k v; do [ "$k" = d ] && rm -rf -- "$v"; done < "$f"
rm -f "$f"
`;
  const reaper = spawn("sh", ["-c", script, "berth-testbed-reaper", String(process.pid), reaperFile], {
    detached: true,
    stdio: "ignore",
  });
  reaper.unref();
}

function writeReaperFile(): void {
  if (!reaperFile) return;
  const lines = [...[...live.keys()].map((p) => `g ${p}`), ...[...removeOnDeath].map((d) => `d ${d}`)];
  try {
    writeFileSync(reaperFile, lines.length ? `${lines.join("\n")}\n` : "");
  } catch {
    // tmp gone: the other layers still apply
  }
}

/** What a child spawned with piped stdio logs: its pino lines (stdout, parsed) and its stderr as text. */
export interface ChildLogs {
  lines: Record<string, unknown>[];
  stderr(): string;
}

export function childLogs(child: ChildProcess): ChildLogs {
  const lines: Record<string, unknown>[] = [];
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  let buffered = "";
  child.stdout?.on("data", (c: Buffer) => {
    buffered += c.toString();
    for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
      lines.push(JSON.parse(buffered.slice(0, nl)));
      buffered = buffered.slice(nl + 1);
    }
  });
  return { lines, stderr: () => stderr };
}
