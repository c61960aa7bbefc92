// Takes down whatever a real node of this name left on the host, with or without the run that made it:
// pods (through the apiserver, when it answers), the kubelet, the device plugin, containerd and its
// shims and containers, mounts (the kubelet's rshared binds, overlay roots, the pods' network
// namespaces), the bridge and its veths, cgroups, and what the node changed on the host (ip_forward, a
// FORWARD rule, kube-proxy's and kube-router's chains). Idempotent: it runs before every start (after a kill, things are left behind) and on
// every stop. Order matters (docs/dev/testing.md, "A real node").
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { KubeHttp } from "../kube.ts";
import { isAlive, processesMentioning } from "../procfs.ts";
import { cleanupKubeProxy } from "./kube-proxy.ts";
import { cleanupKubeRouter } from "./kube-router.ts";
import { CONTAINER_LOG_LINKS, type HostChanges, type NodeLayout, RUN_ROOT } from "./layout.ts";

/** What a run changed on the host, written before the change (run/state.json). */
export interface Leftovers {
  processes: { pid: number; cmdline: string }[];
  mounts: string[];
  links: string[];
  cgroups: string[];
}

/** What of this node is still on the host; all empty after a teardown. */
export function leftovers(l: NodeLayout): Leftovers {
  return {
    processes: nodeProcesses(l),
    mounts: mountsUnder(l),
    links: linksOf(l),
    cgroups: cgroupDirs(l).filter((d) => existsSync(d)),
  };
}

export interface TeardownOptions {
  /** The cluster's admin client: pods on the node and the Node object are deleted through it. */
  kube?: KubeHttp;
  /** The kubelet runs: pods are deleted gracefully first, so it stops them and releases their IPs. */
  kubeletRuns?: boolean;
  log?: (line: string) => void;
  /** How long pods may take to go through the kubelet before it is stopped anyway. */
  podGraceMs?: number;
}

export async function teardownRealNode(l: NodeLayout, o: TeardownOptions = {}): Promise<void> {
  const log = o.log ?? (() => {});
  // 1. Pods, through the kubelet while it runs (it stops containers and releases pod IPs in order).
  if (o.kube && o.kubeletRuns) await deletePods(o.kube, l.name, 1, o.podGraceMs ?? 30_000).catch(() => undefined);
  // 2. The node's processes: the kubelet and the plugin first, then containers (by cgroup), then the
  //    shims, then containerd.
  await killAll(
    nodeProcesses(l).filter((p) => /kubelet|fake-gpu-plugin/.test(p.cmdline.split(" ")[0] ?? "")),
    "SIGTERM",
  );
  for (const pid of cgroupPids(l)) signal(pid, "SIGKILL");
  await killAll(
    nodeProcesses(l).filter((p) => p.cmdline.includes("containerd-shim")),
    "SIGKILL",
  );
  await killAll(nodeProcesses(l), "SIGTERM");
  // 3. Mounts, deepest first; a busy one is detached (lazy) so the folder can go.
  unmountAll(l);
  // 4. Links: veths on the bridge, then the bridge.
  for (const link of linksOf(l)) run("ip", ["link", "del", link]);
  // 5. cgroups, leaves first (rmdir of an empty cgroup; a cgroup with processes refuses).
  for (const dir of cgroupDirs(l).reverse()) {
    try {
      rmdirSync(dir);
    } catch {
      // already gone
    }
  }
  // 6. The host settings this node changed.
  restoreHost(l, log);
  // 7. Files: the kubelet's symlinks into this node's pod logs, the folders.
  removeLogLinks(l);
  // 8. What the apiserver still shows of the node: its pods (nothing runs them now) and the Node.
  if (o.kube) {
    await deletePods(o.kube, l.name, 0, 10_000).catch(() => undefined);
    await o.kube.raw("DELETE", `/api/v1/nodes/${l.name}`).catch(() => undefined);
  }
  const left = leftovers(l);
  if (left.mounts.length > 0)
    throw new Error(`real node ${l.name}: mounts left after teardown: ${left.mounts.join(", ")}`);
  rmSync(l.base, { recursive: true, force: true });
  rmSync(l.run, { recursive: true, force: true });
  if (left.processes.length + left.links.length + left.cgroups.length > 0)
    throw new Error(`real node ${l.name}: left after teardown: ${JSON.stringify(left)}`);
}

async function deletePods(kube: KubeHttp, node: string, graceSeconds: number, waitMs: number): Promise<void> {
  const list = await kube.json<{ items: { metadata: { name: string; namespace: string } }[] }>(
    "GET",
    `/api/v1/pods?fieldSelector=spec.nodeName%3D${encodeURIComponent(node)}`,
  );
  await Promise.all(
    list.items.map((p) =>
      kube.raw("DELETE", `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`, {
        gracePeriodSeconds: graceSeconds,
      }),
    ),
  );
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    const left = await kube.json<{ items: unknown[] }>(
      "GET",
      `/api/v1/pods?fieldSelector=spec.nodeName%3D${encodeURIComponent(node)}`,
    );
    if (left.items.length === 0) break;
    await sleep(200);
  }
}

/** Processes of this node: those naming its folders or sockets (kubelet, containerd, shims, plugin). */
function nodeProcesses(l: NodeLayout): { pid: number; cmdline: string }[] {
  const seen = new Map<number, string>();
  for (const text of [l.base, l.run, l.devicePluginEndpoint])
    for (const p of processesMentioning(text)) seen.set(p.pid, p.cmdline);
  for (const pid of cgroupPids(l)) if (!seen.has(pid) && isAlive(pid)) seen.set(pid, cmdlineOf(pid));
  return [...seen].map(([pid, cmdline]) => ({ pid, cmdline }));
}

function cmdlineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}

async function killAll(procs: { pid: number }[], first: NodeJS.Signals): Promise<void> {
  for (const p of procs) signal(p.pid, first);
  const deadline = Date.now() + 10_000;
  while (procs.some((p) => isAlive(p.pid)) && Date.now() < deadline) await sleep(100);
  for (const p of procs) if (isAlive(p.pid)) signal(p.pid, "SIGKILL");
  const hard = Date.now() + 5_000;
  while (procs.some((p) => isAlive(p.pid)) && Date.now() < hard) await sleep(50);
}

function signal(pid: number, s: NodeJS.Signals): void {
  try {
    process.kill(pid, s);
  } catch {
    // gone
  }
}

/** The cgroup hierarchies: each v1 controller's mount (and the named systemd one), or the v2 root. */
export function cgroupHierarchies(): string[] {
  const out: string[] = [];
  for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const [pre, post] = line.split(" - ");
    const fstype = post?.split(" ")[0];
    const mountPoint = pre?.split(" ")[4];
    if (!mountPoint) continue;
    if (fstype === "cgroup") out.push(mountPoint);
  }
  if (out.length === 0 && existsSync("/sys/fs/cgroup/cgroup.controllers")) out.push("/sys/fs/cgroup");
  return out;
}

/** Every cgroup folder at or below the node's cgroupRoot, parents before children. */
function cgroupDirs(l: NodeLayout): string[] {
  const dirs: string[] = [];
  const walk = (d: string) => {
    dirs.push(d);
    let entries: string[] = [];
    try {
      entries = readdirSync(d, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
    } catch {
      return;
    }
    for (const e of entries) walk(join(d, e));
  };
  for (const h of cgroupHierarchies()) {
    const root = join(h, l.cgroupRoot);
    if (existsSync(root)) walk(root);
  }
  return dirs;
}

function cgroupPids(l: NodeLayout): number[] {
  const pids = new Set<number>();
  for (const d of cgroupDirs(l)) {
    try {
      for (const p of readFileSync(join(d, "cgroup.procs"), "utf8").split("\n")) if (p) pids.add(Number(p));
    } catch {
      // gone
    }
  }
  return [...pids];
}

/** Mount points at or below the node's folders, deepest first (repeated entries for stacked mounts). */
function mountsUnder(l: NodeLayout): string[] {
  const points: string[] = [];
  for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const mp = line.split(" ")[4];
    if (!mp) continue;
    const path = mp.replace(/\\040/g, " ");
    if ([l.base, l.run].some((p) => path === p || path.startsWith(`${p}/`))) points.push(path);
  }
  return points.sort((a, b) => b.length - a.length);
}

function unmountAll(l: NodeLayout): void {
  for (let round = 0; round < 20; round++) {
    const points = mountsUnder(l);
    if (points.length === 0) return;
    for (const p of points) if (!run("umount", [p])) run("umount", ["-l", p]);
  }
}

/** The bridge and every link enslaved to it. */
function linksOf(l: NodeLayout): string[] {
  const out = run("ip", ["-o", "link", "show"]) ?? "";
  const links: string[] = [];
  for (const line of out.split("\n")) {
    const m = /^\d+:\s+([^:@\s]+)(?:@\S+)?:.*?(?:master (\S+))?/.exec(line);
    if (!m?.[1]) continue;
    if (line.includes(` master ${l.bridge} `)) links.push(m[1]);
  }
  if (/^\d+:\s+/m.test(out) && new RegExp(`^\\d+:\\s+${l.bridge}:`, "m").test(out)) links.push(l.bridge);
  return links;
}

function restoreHost(l: NodeLayout, log: (line: string) => void): void {
  if (!existsSync(l.stateFile)) return;
  const changes = JSON.parse(readFileSync(l.stateFile, "utf8")) as HostChanges;
  if (changes.kubeProxy) {
    cleanupKubeProxy(changes.kubeProxy);
    log(`[real-node] ${l.name}: removed kube-proxy's chains`);
  }
  if (changes.kubeRouter) {
    cleanupKubeRouter();
    log(`[real-node] ${l.name}: removed kube-router's chains and ipsets`);
  }
  if (changes.forwardRule) {
    run("iptables", ["-D", ...changes.forwardRule]);
    log(`[real-node] ${l.name}: removed its FORWARD rule`);
  }
  if (changes.ipForward !== undefined) {
    // Another real node still running needs forwarding: it inherits the value to put back instead.
    const heir = otherRunningNode(l);
    if (heir) {
      const theirs = JSON.parse(readFileSync(join(RUN_ROOT, heir, "state.json"), "utf8")) as HostChanges;
      writeFileSync(join(RUN_ROOT, heir, "state.json"), JSON.stringify({ ...theirs, ipForward: changes.ipForward }));
      log(`[real-node] ${l.name}: ip_forward left on for ${heir}, which puts ${changes.ipForward} back`);
    } else {
      writeFileSync("/proc/sys/net/ipv4/ip_forward", changes.ipForward);
      log(`[real-node] ${l.name}: ip_forward back to ${changes.ipForward}`);
    }
  }
  rmSync(l.stateFile, { force: true });
}

/** A real node of another name whose owner runs and which recorded its host changes. */
function otherRunningNode(l: NodeLayout): string | undefined {
  let names: string[] = [];
  try {
    names = readdirSync(RUN_ROOT);
  } catch {
    return undefined;
  }
  return names.find((n) => {
    if (n === l.name || !existsSync(join(RUN_ROOT, n, "state.json"))) return false;
    try {
      return isAlive(Number(readFileSync(join(RUN_ROOT, n, "owner"), "utf8")));
    } catch {
      return false;
    }
  });
}

function removeLogLinks(l: NodeLayout): void {
  let names: string[] = [];
  try {
    names = readdirSync(CONTAINER_LOG_LINKS);
  } catch {
    return;
  }
  for (const n of names) {
    const p = join(CONTAINER_LOG_LINKS, n);
    try {
      if (readlinkSync(p).startsWith(`${l.podLogs}/`)) rmSync(p, { force: true });
    } catch {
      // not a link
    }
  }
}

/** stdout, or undefined when the command failed. */
function run(cmd: string, args: string[]): string | undefined {
  try {
    return execFileSync(cmd, args, { stdio: ["ignore", "pipe", "ignore"] }).toString();
  } catch {
    return undefined;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
