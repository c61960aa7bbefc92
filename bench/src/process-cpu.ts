// CPU time of this process and every process below it (the fleet's apiservers, etcd, kwok, scheduler,
// Postgres and its backends, the split mode's children), read from /proc/<pid>/stat, so a figure can say
// which process a phase spent its CPU in. Linux only; elsewhere the snapshot is empty.
import { readFileSync } from "node:fs";
import { allPids, type ProcStat, procStat } from "@berth/e2e";

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

/**
 * CPU seconds by process, with its label, for this process and its descendants. Kept by pid so that a
 * difference counts only processes alive at its end: one that exited in between (a stopped worker's
 * Postgres backends) would otherwise take its whole past off its label's total.
 */
export type CpuSnapshot = Map<number, { label: string; cpuS: number }>;

/**
 * `label(pid, comm, cmdline)` names a process (undefined: by its command name); processes with the same
 * label add up (Postgres' backends, for one).
 */
export function cpuSnapshot(label: (pid: number, comm: string, cmdline: string) => string | undefined): CpuSnapshot {
  const all = new Map<number, ProcStat>();
  let pids: number[] = [];
  try {
    pids = allPids();
  } catch {
    return new Map(); // not Linux
  }
  for (const pid of pids) {
    const p = procStat(pid);
    if (p) all.set(p.pid, p);
  }
  const mine = (p: ProcStat): boolean => {
    for (let q: ProcStat | undefined = p, hops = 0; q && hops < 64; q = all.get(q.ppid), hops++)
      if (q.pid === process.pid) return true;
    return false;
  };
  const out: CpuSnapshot = new Map();
  for (const p of all.values()) {
    if (!mine(p)) continue;
    out.set(p.pid, { label: label(p.pid, p.comm, cmdline(p.pid)) ?? p.comm, cpuS: p.cpuS });
  }
  return out;
}

/** CPU seconds each label used between two snapshots. */
export function cpuUsed(before: CpuSnapshot, after: CpuSnapshot): Map<string, number> {
  const used = new Map<string, number>();
  for (const [pid, a] of after) used.set(a.label, (used.get(a.label) ?? 0) + a.cpuS - (before.get(pid)?.cpuS ?? 0));
  return used;
}

/** "api 12.3 s (41 %), …": CPU seconds each label used between two snapshots, and its share of one core. */
export function showCpu(before: CpuSnapshot, after: CpuSnapshot, wallMs: number, min = 0.2): string {
  return [...cpuUsed(before, after).entries()]
    .filter(([, v]) => v >= min)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v.toFixed(1)} s (${((v * 100_000) / wallMs).toFixed(0)} % of a core)`)
    .join(", ");
}
