// NetworkPolicy on a real node (docs/dev/real-node-network.md): kube-router from the node's build with only
// its firewall (no routing, no service proxy: the bridge and kube-proxy do those), watching the cluster's
// apiserver. Its chains (KUBE-ROUTER-*, KUBE-NWPLCY-*, KUBE-POD-FW-*) and ipsets are the host's, one set per
// host, so one real node at a time runs it; recorded in state.json before the start, removed by the teardown
// (also after a kill). Bridged pod-to-pod frames pass its FORWARD rules only with bridge-nf-call-iptables=1
// (quirks.ts); the node refuses to start it otherwise.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ManagedProcess, spawnManaged } from "../process.ts";
import { hostChainsOwner } from "./kube-proxy.ts";
import type { HostChanges, NodeLayout } from "./layout.ts";

/** Starts kube-router's firewall for the node; resolves once its health endpoint answers. */
export async function startKubeRouter(o: {
  layout: NodeLayout;
  binDir: string;
  kubeconfig: string;
  healthPort: number;
  timeoutMs: number;
}): Promise<ManagedProcess> {
  const l = o.layout;
  const other = hostChainsOwner(l.name, "kubeRouter");
  if (other)
    throw new Error(`real node ${l.name}: ${other} runs kube-router on this host already (its chains are the host's)`);
  const binary = join(o.binDir, "kube-router");
  const state: HostChanges = existsSync(l.stateFile) ? JSON.parse(readFileSync(l.stateFile, "utf8")) : {};
  writeFileSync(l.stateFile, JSON.stringify({ ...state, kubeRouter: binary }));
  // A copy in the node's folder puts the folder in kube-router's command line, which is how the teardown
  // finds the node's processes (teardown.ts) and stops it before removing its rules.
  const kubeconfig = join(l.base, "kube-router.kubeconfig");
  copyFileSync(o.kubeconfig, kubeconfig);
  const proc = spawnManaged({
    name: `${l.name}/kube-router`,
    command: binary,
    args: [
      `--kubeconfig=${kubeconfig}`,
      `--hostname-override=${l.name}`,
      "--run-firewall",
      "--run-router=false",
      "--run-service-proxy=false",
      "--enable-cni=false",
      `--health-port=${o.healthPort}`,
      "--metrics-port=0",
      "--v=1",
    ],
    logFile: join(l.logs, "kube-router.log"),
  });
  const deadline = performance.now() + o.timeoutMs;
  for (;;) {
    if (proc.hasExited()) throw new Error(`real node ${l.name}: kube-router exited:\n${proc.tail(20)}`);
    const res = await fetch(`http://127.0.0.1:${o.healthPort}/healthz`).catch(() => undefined);
    await res?.body?.cancel();
    if (res?.ok) return proc;
    if (performance.now() > deadline) {
      await proc.stop(2000);
      throw new Error(`real node ${l.name}: kube-router not healthy after ${o.timeoutMs / 1000}s:\n${proc.tail(20)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** kube-router's own chains; the host's other KUBE- chains are kube-proxy's (kube-proxy.ts). */
const CHAIN = /^(KUBE-ROUTER-|KUBE-NWPLCY-|KUBE-POD-FW-)/;
/** kube-router's ipsets: the policies' source and destination pod sets (and their IPv6 twins). */
const IPSET = /^(inet6:)?KUBE-(SRC|DST)-/;

/**
 * Removes kube-router's chains, rules and ipsets from the host, after it stopped. Its own
 * `--cleanup-config` cannot: at v2.1.0 it crashes in the service proxy's part before the firewall's.
 */
export function cleanupKubeRouter(): void {
  const quiet = (cmd: string, args: string[]) => {
    try {
      return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 60_000 });
    } catch {
      return ""; // gone already, or never made
    }
  };
  for (const tool of ["iptables", "ip6tables"]) {
    const saved = quiet(`${tool}-save`, ["-t", "filter"]).split("\n");
    // The jumps into its chains from the built-in ones first: a chain still jumped to cannot go.
    for (const line of saved) {
      const m = /^-A (INPUT|FORWARD|OUTPUT) (.*-j (\S+).*)$/.exec(line);
      if (m?.[3] && CHAIN.test(m[3])) quiet(tool, ["-w", "-D", m[1] as string, ...splitRule(m[2] as string)]);
    }
    const chains = saved.map((l) => /^:(\S+)/.exec(l)?.[1] ?? "").filter((c) => CHAIN.test(c));
    for (const c of chains) quiet(tool, ["-w", "-F", c]);
    for (const c of chains) quiet(tool, ["-w", "-X", c]);
  }
  for (const set of quiet("ipset", ["list", "-n"])
    .split("\n")
    .filter((n) => IPSET.test(n)))
    quiet("ipset", ["destroy", set]);
}

/** A rule of iptables-save's output as arguments: words, and quoted comments as one. */
function splitRule(rule: string): string[] {
  return [...rule.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) => m[1] ?? (m[2] as string));
}
