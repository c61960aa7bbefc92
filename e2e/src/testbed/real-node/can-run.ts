// Whether this machine can run a real node, and if not, why in one line (npm start prints it and goes
// on with kwok alone; the real node's tests skip with it).
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isAlive } from "../procfs.ts";
import { RUN_ROOT } from "./layout.ts";

export type CanRun = { ok: true } | { ok: false; reason: string };

export const RUNTIME_SCRIPT = fileURLToPath(new URL("../../../../scripts/ensure-node-runtime.sh", import.meta.url));

export interface CanRunOptions {
  /** Install containerd, runc and iptables from Debian when missing (needs root). Default true. */
  install?: boolean;
}

export function canRunRealNode(o: CanRunOptions = {}): CanRun {
  if (process.platform !== "linux")
    return { ok: false, reason: `a real node needs Linux (this is ${process.platform})` };
  if (process.getuid?.() !== 0)
    return { ok: false, reason: "a real node needs root (containers, mounts, links, cgroups)" };
  if (!readFileSync("/proc/filesystems", "utf8").includes("overlay"))
    return { ok: false, reason: "the kernel has no overlay filesystem for container images" };
  if (!existsSync("/sys/fs/cgroup")) return { ok: false, reason: "no cgroup filesystem at /sys/fs/cgroup" };
  if (!onPath("ip")) return { ok: false, reason: "the `ip` tool (iproute2) is not installed" };
  if (!(onPath("unshare") && onPath("mount")))
    return { ok: false, reason: "`unshare` and `mount` (util-linux) are not installed" };
  if (!["containerd", "runc", "ctr", "iptables", "iptables-restore"].every(onPath)) {
    if (o.install === false) return { ok: false, reason: "containerd, runc or iptables is not installed" };
    try {
      execFileSync("sh", [RUNTIME_SCRIPT], { stdio: ["ignore", "ignore", "pipe"] });
    } catch (err) {
      const why = String((err as { stderr?: Buffer }).stderr ?? "")
        .trim()
        .split("\n")
        .at(-1);
      return { ok: false, reason: why || "containerd, runc or iptables could not be installed" };
    }
  }
  return { ok: true };
}

/** The process that runs the real node of this name now, if another one does. */
export function ownerOf(name: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(RUN_ROOT, name, "owner"), "utf8"));
    return pid !== process.pid && isAlive(pid) ? pid : undefined;
  } catch {
    return undefined; // no owner file: nothing runs under that name
  }
}

function onPath(cmd: string): boolean {
  return `${process.env.PATH ?? ""}:/usr/sbin:/usr/bin:/sbin:/bin`
    .split(":")
    .some((d) => d && existsSync(join(d, cmd)));
}
