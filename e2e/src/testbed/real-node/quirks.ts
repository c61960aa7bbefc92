// What this machine is like, read rather than assumed (docs/dev/testing.md, "A real node"): each quirk
// changes how the node is set up, and each is said in one log line.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";

const CAP_SYS_RESOURCE = 24n;

export interface HostQuirks {
  cgroup: "v1" | "v2";
  /** CAP_SYS_RESOURCE in the bounding set: without it runc cannot raise oom_score_adj (every sandbox fails). */
  capSysResource: boolean;
  /** FORWARD's policy in iptables' filter table; "none" when no iptables or nft tool is installed. */
  forwardPolicy: "ACCEPT" | "DROP" | "none";
  /** br_netfilter loaded and bridge-nf-call-iptables=1: bridged frames go through FORWARD. */
  bridgeNetfilter: boolean;
  ipForward: boolean;
}

export function detectQuirks(): HostQuirks {
  const bnd = /^CapBnd:\s*([0-9a-f]+)$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? "0";
  return {
    cgroup: existsSync("/sys/fs/cgroup/cgroup.controllers") ? "v2" : "v1",
    capSysResource: ((BigInt(`0x${bnd}`) >> CAP_SYS_RESOURCE) & 1n) === 1n,
    forwardPolicy: forwardPolicy(),
    bridgeNetfilter: readSysctl("net/bridge/bridge-nf-call-iptables") === "1",
    ipForward: readSysctl("net/ipv4/ip_forward") === "1",
  };
}

export function readSysctl(key: string): string | undefined {
  try {
    return readFileSync(`/proc/sys/${key}`, "utf8").trim();
  } catch {
    return undefined;
  }
}

function forwardPolicy(): HostQuirks["forwardPolicy"] {
  for (const [cmd, args] of [
    ["iptables", ["-S", "FORWARD"]],
    ["nft", ["list", "chain", "ip", "filter", "FORWARD"]],
  ] as const) {
    try {
      const out = execFileSync(cmd, args, { stdio: ["ignore", "pipe", "ignore"] }).toString();
      return /-P FORWARD DROP|policy drop/.test(out) ? "DROP" : "ACCEPT";
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
      return "ACCEPT"; // the tool is there but the chain is not: nothing filters
    }
  }
  return "none";
}

/** Whether the node's bridge needs its own FORWARD rule for pod-to-pod traffic. */
export function needsForwardRule(q: HostQuirks): boolean {
  return q.forwardPolicy === "DROP" && q.bridgeNetfilter;
}

/** One line per quirk met, saying what the node does about it. */
export function describeQuirks(q: HostQuirks, bridge: string): string[] {
  const lines: string[] = [];
  if (!q.capSysResource)
    lines.push(
      "CAP_SYS_RESOURCE is missing from the capability bounding set: containerd restricts oom_score_adj and the kubelet keeps oomScoreAdj 0",
    );
  if (q.cgroup === "v1") lines.push("cgroup v1: the kubelet runs with failCgroupV1: false and the cgroupfs driver");
  if (needsForwardRule(q))
    lines.push(
      `FORWARD policy DROP with bridge-nf-call-iptables=1: an ACCEPT rule for ${bridge}-to-${bridge} traffic is added and removed on teardown`,
    );
  else if (q.forwardPolicy === "DROP")
    lines.push(
      "FORWARD policy DROP, but bridged frames skip iptables (no br_netfilter): pods on the bridge still reach each other",
    );
  if (!q.ipForward) lines.push("ip_forward is 0: the CNI bridge turns it on; teardown puts 0 back");
  return lines;
}
