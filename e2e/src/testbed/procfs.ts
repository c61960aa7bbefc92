// Reading /proc (Linux) to prove what a fleet leaves behind and to measure what it costs: listening TCP
// ports per process, processes whose command line names a folder, resident memory, CPU time.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** USER_HZ: the unit of the CPU times in /proc/<pid>/stat (100 on every Linux this runs on). */
const TICKS_PER_S = 100;

/** Every pid in /proc now. */
export function allPids(): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

export interface ProcStat {
  pid: number;
  ppid: number;
  comm: string;
  /** "R", "S", "Z" (zombie), … */
  state: string;
  /** utime + stime, in seconds. */
  cpuS: number;
  /** cutime + cstime: what the children it has reaped used, in seconds. */
  reapedChildrenCpuS: number;
}

/** /proc/<pid>/stat parsed; undefined when the process is gone (or this is not Linux). */
export function procStat(pid: number): ProcStat | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // comm is in parentheses and may hold spaces or ")": the fields after it start at the last ")".
  const close = stat.lastIndexOf(")");
  const f = stat.slice(close + 2).split(" ");
  return {
    pid,
    ppid: Number(f[1]),
    comm: stat.slice(stat.indexOf("(") + 1, close),
    state: f[0] ?? "",
    cpuS: (Number(f[11]) + Number(f[12])) / TICKS_PER_S,
    reapedChildrenCpuS: (Number(f[13]) + Number(f[14])) / TICKS_PER_S,
  };
}

/** CPU seconds (user + system) a process has used so far; 0 when it is gone. */
export function cpuSeconds(pid: number): number {
  return procStat(pid)?.cpuS ?? 0;
}

/** Processes whose parent is `ppid` now (zombies included: their CPU time is still in their stat). */
export function childrenOf(ppid: number): number[] {
  return allPids().filter((pid) => procStat(pid)?.ppid === ppid);
}

/**
 * CPU seconds a process and its children have used so far: its own, its children's now (not their
 * children's) and what the children it has reaped used (a Postgres postmaster and its backends, say).
 * 0 when it is gone.
 */
export function cpuSecondsWithChildren(pid: number): number {
  const p = procStat(pid);
  if (!p) return 0;
  return childrenOf(pid).reduce((s, child) => s + cpuSeconds(child), p.cpuS + p.reapedChildrenCpuS);
}

/** Live (not zombie) processes whose command line contains `text`, e.g. a fleet's data folder. */
export function processesMentioning(text: string): { pid: number; cmdline: string }[] {
  const found: { pid: number; cmdline: string }[] = [];
  for (const pid of allPids()) {
    if (pid === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
      if (!cmdline.includes(text)) continue;
      if (isAlive(pid)) found.push({ pid, cmdline });
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/** Whether /proc/<pid> is a live process (a reaped or zombie one is not). */
export function isAlive(pid: number): boolean {
  const state = procStat(pid)?.state;
  return state !== undefined && state !== "Z";
}

interface ListenEntry {
  port: number;
  inode: string;
}

function listeningTcp(): ListenEntry[] {
  const out: ListenEntry[] = [];
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.trim().split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      const [local, state, inode] = [f[1], f[3], f[9]];
      if (state !== "0A" || !local || !inode) continue; // 0A = LISTEN
      out.push({ port: Number.parseInt(local.split(":")[1] ?? "0", 16), inode });
    }
  }
  return out;
}

/** TCP ports in LISTEN state now, anywhere on the machine. */
export function listeningPorts(): Set<number> {
  return new Set(listeningTcp().map((l) => l.port));
}

/** TCP ports the given processes listen on (socket inodes matched through /proc/<pid>/fd). */
export function listeningPortsOf(pids: readonly number[]): Set<number> {
  const byInode = new Map(listeningTcp().map((l) => [l.inode, l.port]));
  const ports = new Set<number>();
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        const port = m?.[1] ? byInode.get(m[1]) : undefined;
        if (port !== undefined) ports.add(port);
      } catch {
        // fd closed meanwhile
      }
    }
  }
  return ports;
}

/** A size line of /proc/<pid>/status (in kB there) in bytes, 0 when it is gone. */
function statusBytes(pid: number, field: "VmRSS" | "VmHWM"): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m?.[1] ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Resident set size of one process in bytes (VmRSS), 0 when it is gone. */
export function rssBytes(pid: number): number {
  return statusBytes(pid, "VmRSS");
}

/** The largest resident set the process has had so far, in bytes (VmHWM), 0 when it is gone. */
export function peakRssBytes(pid: number): number {
  return statusBytes(pid, "VmHWM");
}
