// The real node's configuration files: containerd's (its own instance), the kubelet's, the CNI network's,
// and the per-registry hosts files that name the bed's registries as plain HTTP. Pure text from inputs.
import { stringify } from "yaml";
import { SERVICE_CIDR } from "../cluster.ts";
import { CLUSTER_DOMAIN } from "./coredns.ts";
import type { NodeLayout } from "./layout.ts";
import type { HostQuirks } from "./quirks.ts";

/** The RuntimeClass `nvidia` (gpu.ts) names this handler; here it is plain runc: there is no GPU. */
export const GPU_RUNTIME_HANDLER = "nvidia";

export function containerdConfig(l: NodeLayout, o: { cniBinDir: string; pauseImage: string }): string {
  const runc = (name: string) => `
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.${name}]
  runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.${name}.options]
    SystemdCgroup = false`;
  return `# Written by e2e/src/testbed/real-node/config.ts for the bed's real node "${l.name}".
version = 2
root = "${l.containerdRoot}"
state = "${l.containerdState}"
oom_score = 0
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "${l.containerdSocket}"

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "${l.base}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${o.pauseImage}"
  # Without CAP_SYS_RESOURCE in the bounding set runc cannot raise oom_score_adj: every sandbox would fail.
  restrict_oom_score_adj = true
  # The pods' network namespaces live under this node's state folder, not /run/netns, so a teardown
  # after a kill knows which are its own.
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false

[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"
${runc("runc")}
${runc(GPU_RUNTIME_HANDLER)}

[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "${o.cniBinDir}"
  conf_dir = "${l.cniConf}"
  max_conf_num = 1

[plugins."io.containerd.grpc.v1.cri".registry]
  # One folder per registry host (hosts.toml), read at each pull: registries can be added while it runs.
  config_path = "${l.registryHosts}"
`;
}

/** containerd's hosts.toml for a bed registry (`127.0.0.1:<port>`): plain HTTP, pull and resolve. */
export function registryHostsToml(host: string): string {
  return `server = "http://${host}"

[host."http://${host}"]
  capabilities = ["pull", "resolve"]
`;
}

export interface KubeletConfigInput {
  port: number;
  healthzPort: number;
  quirks: HostQuirks;
  /** The cluster's DNS Service (coredns.ts): the nameserver of every ClusterFirst pod. */
  clusterDns?: string;
}

export function kubeletConfig(l: NodeLayout, o: KubeletConfigInput): string {
  const doc = {
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    // Loopback only, as every address of the bed. The apiserver dials this port for logs and exec,
    // presenting no client certificate: anonymous requests are allowed, and nothing else can connect.
    address: "127.0.0.1",
    port: o.port,
    readOnlyPort: 0,
    healthzBindAddress: "127.0.0.1",
    healthzPort: o.healthzPort,
    authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
    authorization: { mode: "AlwaysAllow" },
    containerRuntimeEndpoint: `unix://${l.containerdSocket}`,
    cgroupDriver: "cgroupfs",
    cgroupsPerQOS: true,
    cgroupRoot: l.cgroupRoot,
    // kubelet 1.37 refuses cgroup v1 unless told; with it, a warning.
    failCgroupV1: o.quirks.cgroup === "v1" ? false : undefined,
    failSwapOn: false,
    // With oom_score_adj restricted (no CAP_SYS_RESOURCE) the kubelet may not lower its own below 0.
    oomScoreAdj: 0,
    // The node's own (the kubelet reads `podLogsDir`; a misspelt key is ignored and every node shared the
    // host's /var/log/pods, where each kubelet removed the others' pods' logs as unknown).
    podLogsDir: l.podLogs,
    volumePluginDir: `${l.base}/volume-plugins`,
    serializeImagePulls: false,
    // A shared development machine's disk is often fuller than a node's; only a nearly full one evicts.
    evictionHard: {
      "memory.available": "100Mi",
      "nodefs.available": "1%",
      "imagefs.available": "1%",
      "nodefs.inodesFree": "1%",
    },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    // Status (and so a newly registered device plugin's allocatable) posts within 2 s; only changes are written.
    nodeStatusUpdateFrequency: "2s",
    shutdownGracePeriod: "0s",
    resolvConf: "/etc/resolv.conf",
    clusterDNS: o.clusterDns ? [o.clusterDns] : undefined,
    clusterDomain: o.clusterDns ? CLUSTER_DOMAIN : undefined,
    // Its iptables chains (KUBE-FIREWALL and canaries) would be the host's and outlive the node; the
    // chains a Service needs are kube-proxy's (kube-proxy.ts), which cleans them up.
    makeIPTablesUtilChains: false,
  };
  return stringify(doc, { lineWidth: 0 });
}

export function cniConfig(l: NodeLayout, podCidr: string): string {
  return `${JSON.stringify(
    {
      cniVersion: "1.0.0",
      name: `berth-${l.name}`,
      plugins: [
        {
          type: "bridge",
          bridge: l.bridge,
          // The bridge holds the subnet's gateway address: the host reaches every pod at its IP (the
          // session gateway connects to pods so).
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          // The cluster's Services through the host, where kube-proxy's rules answer them (kube-proxy.ts).
          ipam: {
            type: "host-local",
            ranges: [[{ subnet: podCidr }]],
            routes: [{ dst: SERVICE_CIDR }],
            dataDir: l.cniIpam,
          },
        },
      ],
    },
    null,
    2,
  )}\n`;
}
