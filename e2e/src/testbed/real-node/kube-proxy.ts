// The cluster's Services on a real node (docs/dev/real-node-network.md): kube-proxy from the node's build, in
// iptables mode, watching the cluster's apiserver. Its chains (KUBE-SERVICES and the rest) are the host's,
// one set per host, so one real node at a time runs it: the node records it in its state.json before the
// start, and the teardown (also after a kill) runs cleanupKubeProxy. It changes no sysctl: conntrack sizes stay as they are and NodePorts answer on the node's
// bridge address only (not on loopback, which would need route_localnet).
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ManagedProcess, spawnManaged } from "../process.ts";
import { isAlive } from "../procfs.ts";
import { bridgeGateway } from "./bridge.ts";
import { type HostChanges, type NodeLayout, RUN_ROOT } from "./layout.ts";

export function kubeProxyConfig(o: {
  nodeName: string;
  kubeconfig: string;
  podCidr: string;
  healthzPort: number;
  metricsPort: number;
}): string {
  const gateway = bridgeGateway(o.podCidr).address;
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
hostnameOverride: ${o.nodeName}
clientConnection:
  kubeconfig: ${o.kubeconfig}
clusterCIDR: ${o.podCidr}
detectLocalMode: ClusterCIDR
healthzBindAddress: 127.0.0.1:${o.healthzPort}
metricsBindAddress: 127.0.0.1:${o.metricsPort}
nodePortAddresses: ["${gateway}/32"]
iptables:
  localhostNodePorts: false
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
  udpTimeout: 0s
  udpStreamTimeout: 0s
`;
}

/** The running node, other than `self`, whose kube-proxy (or kube-router, kube-router.ts) owns the host's chains. */
export function hostChainsOwner(self: string, key: "kubeProxy" | "kubeRouter" = "kubeProxy"): string | undefined {
  let names: string[] = [];
  try {
    names = readdirSync(RUN_ROOT);
  } catch {
    return undefined;
  }
  return names.find((n) => {
    if (n === self) return false;
    try {
      const state = JSON.parse(readFileSync(join(RUN_ROOT, n, "state.json"), "utf8")) as HostChanges;
      return state[key] !== undefined && isAlive(Number(readFileSync(join(RUN_ROOT, n, "owner"), "utf8")));
    } catch {
      return false;
    }
  });
}

/** Starts kube-proxy for the node; resolves once its health endpoint says the rules are in place. */
export async function startKubeProxy(o: {
  layout: NodeLayout;
  binDir: string;
  kubeconfig: string;
  podCidr: string;
  healthzPort: number;
  metricsPort: number;
  timeoutMs: number;
}): Promise<ManagedProcess> {
  const l = o.layout;
  const other = hostChainsOwner(l.name);
  if (other)
    throw new Error(
      `real node ${l.name}: ${other} runs kube-proxy on this host already (its chains are the host's, one set per host)`,
    );
  const binary = join(o.binDir, "kube-proxy");
  // Recorded before the start, so that a teardown after a kill cleans its chains up.
  const state: HostChanges = existsSync(l.stateFile) ? JSON.parse(readFileSync(l.stateFile, "utf8")) : {};
  writeFileSync(l.stateFile, JSON.stringify({ ...state, kubeProxy: binary }));
  const config = join(l.base, "kube-proxy.yaml");
  writeFileSync(
    config,
    kubeProxyConfig({
      nodeName: l.name,
      kubeconfig: o.kubeconfig,
      podCidr: o.podCidr,
      healthzPort: o.healthzPort,
      metricsPort: o.metricsPort,
    }),
  );
  const proc = spawnManaged({
    name: `${l.name}/kube-proxy`,
    command: binary,
    args: [`--config=${config}`, "--v=1"],
    logFile: join(l.logs, "kube-proxy.log"),
  });
  const deadline = performance.now() + o.timeoutMs;
  for (;;) {
    if (proc.hasExited()) throw new Error(`real node ${l.name}: kube-proxy exited:\n${proc.tail(20)}`);
    const res = await fetch(`http://127.0.0.1:${o.healthzPort}/healthz`).catch(() => undefined);
    if (res?.ok) return proc;
    await res?.body?.cancel();
    if (performance.now() > deadline) {
      await proc.stop(2000);
      throw new Error(`real node ${l.name}: kube-proxy not healthy after ${o.timeoutMs / 1000}s:\n${proc.tail(20)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Removes what kube-proxy put on the host: `--cleanup` removes its own chains and rules, but not its copy
 * of the kubelet's KUBE-FIREWALL (a kubelet elsewhere may own that one; here none does, since the node's
 * kubelet makes no chains, config.ts).
 */
export function cleanupKubeProxy(binary: string): void {
  const quiet = (cmd: string, args: string[]) => {
    try {
      execFileSync(cmd, args, { stdio: "ignore", timeout: 60_000 });
    } catch {
      // gone already, or never made
    }
  };
  quiet(binary, ["--cleanup"]);
  for (const tool of ["iptables", "ip6tables"]) {
    for (const hook of ["INPUT", "OUTPUT"]) quiet(tool, ["-w", "-D", hook, "-j", "KUBE-FIREWALL"]);
    quiet(tool, ["-w", "-F", "KUBE-FIREWALL"]);
    quiet(tool, ["-w", "-X", "KUBE-FIREWALL"]);
  }
}
