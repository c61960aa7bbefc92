// Where a real node keeps everything, derived from its name alone, so that a teardown after a kill
// (no state of the run that made them) finds the same folders, sockets, cgroups and links.
import { createHash } from "node:crypto";
import { join } from "node:path";

/** The kubelet's device-plugin folder is fixed in the kubelet (k8s.io/kubelet deviceplugin/v1beta1): each
 * node's kubelet runs in a mount namespace where its own folder is mounted there (start.ts). */
export const DEVICE_PLUGIN_DIR = "/var/lib/kubelet/device-plugins";
/** Also fixed in the kubelet: a symlink per container into the pod log folder. */
export const CONTAINER_LOG_LINKS = "/var/log/containers";

export interface NodeLayout {
  name: string;
  /** Persistent data: containerd's root, the kubelet's root, CNI configuration, logs. */
  base: string;
  /** Runtime state on tmpfs: containerd's state (and the pods' network namespaces), sockets, state.json. */
  run: string;
  containerdRoot: string;
  containerdState: string;
  containerdSocket: string;
  containerdConfig: string;
  registryHosts: string;
  kubeletRoot: string;
  kubeletConfig: string;
  podLogs: string;
  /** Seen by this node's kubelet as DEVICE_PLUGIN_DIR. */
  devicePlugins: string;
  cniConf: string;
  cniIpam: string;
  logs: string;
  /** What this run changed on the host (ip_forward, a FORWARD rule), for the teardown to put back. */
  stateFile: string;
  /** The pid of the process that owns the node while it runs. */
  ownerFile: string;
  /** cgroup path under every hierarchy (the kubelet's cgroupRoot). */
  cgroupRoot: string;
  /** Linux link names are at most 15 bytes. */
  bridge: string;
  devicePluginEndpoint: string;
  /** Default pod subnet, one per name (10.234.<n>.0/24), so that nodes of several runs can share a host. */
  podCidr: string;
}

export const DEFAULT_ROOT = "/var/lib/berth-real-node";
export const RUN_ROOT = "/run/berth-real-node";

export function nodeLayout(name: string, root = DEFAULT_ROOT): NodeLayout {
  const base = join(root, name);
  const run = join(RUN_ROOT, name);
  const short = createHash("sha256").update(name).digest("hex").slice(0, 8);
  return {
    name,
    base,
    run,
    containerdRoot: join(base, "containerd"),
    containerdState: join(run, "containerd"),
    containerdSocket: join(run, "containerd.sock"),
    containerdConfig: join(base, "containerd.toml"),
    registryHosts: join(base, "registry-hosts"),
    kubeletRoot: join(base, "kubelet"),
    kubeletConfig: join(base, "kubelet.yaml"),
    podLogs: join(base, "pod-logs"),
    devicePlugins: join(base, "device-plugins"),
    cniConf: join(base, "cni", "conf"),
    cniIpam: join(base, "cni", "ipam"),
    logs: join(base, "logs"),
    stateFile: join(run, "state.json"),
    ownerFile: join(run, "owner"),
    cgroupRoot: `/berth-real-node-${short}`,
    bridge: `berth${short}`,
    devicePluginEndpoint: `berth-${short}.sock`,
    podCidr: `10.234.${Number.parseInt(short.slice(0, 2), 16) % 250}.0/24`,
  };
}

/** What the node changed on the host, kept in its state file (`stateFile`) so a teardown, even after a kill, undoes it. */
export interface HostChanges {
  ipForward?: string;
  forwardRule?: string[];
  /** The kube-proxy binary that ran (kube-proxy.ts): its `--cleanup` removes the host's KUBE-* chains. */
  kubeProxy?: string;
  /** The kube-router binary that ran (kube-router.ts); the teardown removes its chains and ipsets. */
  kubeRouter?: string;
}
