// Reading /proc (Linux) to prove what a fleet leaves behind and to measure what it costs: listening TCP
// ports per process, processes whose command line names a folder, resident memory.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

function allPids(): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

/** Live (not zombie) processes whose command line contains `text`, e.g. a fleet's data folder. */
export function processesMentioning(text: string): { pid: number; cmdline: string }[] {
  const found: { pid: number; cmdline: string }[] = [];
  for (const pid of allPids()) {
    if (pid === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
      if (!cmdline.includes(text)) continue;
      const state = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "")[0];
      if (state !== "Z") found.push({ pid, cmdline });
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/** Whether /proc/<pid> is a live process (a reaped or zombie one is not). */
export function isAlive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "")[0] !== "Z";
  } catch {
    return false;
  }
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

/** Resident set size of one process in bytes (VmRSS), 0 when it is gone. */
export function rssBytes(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m?.[1] ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}
