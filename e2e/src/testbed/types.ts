// Public shapes of the test bed: what a fleet is made of, and what a started one hands back.
import type { PolicyRule } from "@berth/crds";
import type { NodeLayout } from "./real-node/layout.ts";
import type { HostQuirks } from "./real-node/quirks.ts";

export type ClusterKind = "management" | "gpu";
export type ComponentName = "etcd" | "kube-apiserver" | "kube-controller-manager" | "kube-scheduler" | "kwok";

export interface GpuNodeDescription {
  name: string;
  /** The `nvidia.com/gpu.product` label, e.g. "NVIDIA-H100-80GB-HBM3". */
  gpuModel: string;
  /** `nvidia.com/gpu` capacity and the `nvidia.com/gpu.count` label. */
  gpuCount: number;
  /** Extra node labels (merged over the GPU labels). */
  labels?: Record<string, string>;
  /**
   * "hami": the node looks like a node of a HAMi cluster (docs/dev/gpu-sharing.md): `nvidia.com/gpu` counts
   * vGPUs (cards × vgpuSplit), `nvidia.com/gpumem` and `nvidia.com/gpucores` are the cards' sums, and
   * `hami.io/node-nvidia-register` lists each card (stable UUID, memory, cores). Absent: whole cards only.
   */
  sharing?: "hami";
  /** Memory per card (MiB); default: the model's as the cards report it (gpu.ts), else 81920. */
  gpuMemoryMib?: number;
  /**
   * MIG instances per card, by profile (docs/dev/gpu-sharing.md): every card is partitioned so, and the node
   * advertises what NVIDIA's device plugin does with the mixed strategy, `nvidia.com/mig-<profile>` =
   * instances × cards and no whole `nvidia.com/gpu`. Absent: no MIG.
   */
  mig?: Record<string, number>;
  /** vGPUs a card splits into (HAMi's deviceSplitCount); default 10. */
  vgpuSplit?: number;
  /** Defaults: 96 CPUs, 1 TiB memory, 110 pods. */
  cpu?: string;
  memory?: string;
  pods?: number;
}

export interface ClusterDescription {
  name: string;
  kind: ClusterKind;
  /** GPU clusters only: the simulated nodes kwok keeps Ready. */
  nodes?: GpuNodeDescription[];
  /** Create RuntimeClass `nvidia` (handler `nvidia`). */
  gpuRuntimeClass?: boolean;
  /** Create the DaemonSet `nvidia-device-plugin-daemonset` in kube-system ("hami": HAMi's `hami-device-plugin`). */
  gpuDevicePlugin?: boolean | "hami";
  /** Extra command-line flags per component, appended last (feature gates, or a bad flag in a test). */
  extraArgs?: Partial<Record<ComponentName, string[]>>;
  /**
   * GPU clusters only: a real kubelet and containerd that may join this cluster (real-node/). Started
   * only when startFleet is asked to (`realNodes: true`), so a description can name it for everyone.
   */
  realNode?: RealNodeDescription;
}

export interface RealNodeDescription {
  /** Default `<cluster>-real-1`. */
  name?: string;
  /** `nvidia.com/gpu.product` it carries, as the cluster's kwok nodes do. */
  gpuModel: string;
  /** Fake cards its device plugin advertises. */
  gpuCount: number;
  gpuMemoryMib?: number;
}

export interface FleetDescription {
  clusters: ClusterDescription[];
}

export interface StartFleetOptions {
  /** Folder with the five binaries; default: env BERTH_TESTBED_BIN, else e2e/testbed/build-binaries.sh. */
  binDir?: string;
  /** Where the clusters keep their data; default: a fresh temp folder. */
  dataDir?: string;
  /** Keep dataDir on stop (logs for a post-mortem). Default false; a given dataDir is never removed. */
  keepData?: boolean;
  /** Progress lines (component ready, timings). Default: silent. */
  log?: (line: string) => void;
  /** Lines of the CRI log file that `pods/log` serves for every pod (GPU clusters). */
  podLogLines?: string[];
  /** Grace before SIGKILL when stopping a component. Default 5000 ms. */
  stopGraceMs?: number;
  /** How long one component (or all the nodes of a cluster) may take to become ready. Default 120 s. */
  readyTimeoutMs?: number;
  /** Aborting stops whatever has started and rejects (Ctrl-C during `npm start`). */
  signal?: AbortSignal;
  /**
   * Start the real nodes the description names (root and containerd needed: canRunRealNode()). Default
   * false: fleets are kwok alone unless asked.
   */
  realNodes?: boolean;
  /** Registry hosts (`127.0.0.1:<port>`) the real nodes pull from over plain HTTP (more: trustRegistry). */
  realNodeRegistries?: readonly string[];
}

export interface ComponentTiming {
  cluster: string;
  component: ComponentName | "nodes-ready" | "cluster";
  /** Milliseconds from the fleet's start to this component's spawn. */
  startedAtMs: number;
  /** Milliseconds from spawn to ready. */
  durationMs: number;
}

/** The one rule shape, from the shared contracts (type only: the bed runs nothing of the product). */
export type { PolicyRule };

export interface MintCredentialOptions {
  /** ServiceAccount name; also names the Role/ClusterRole and bindings. */
  name: string;
  /** Default "default"; created when missing. */
  namespace?: string;
  /** Rules of a Role in `namespace`, bound with a RoleBinding. */
  rules?: PolicyRule[];
  /** Rules of a ClusterRole, bound with a ClusterRoleBinding. */
  clusterRules?: PolicyRule[];
  /** Token lifetime; default 30 days. */
  expirationSeconds?: number;
}

export interface Credential {
  serviceAccount: string;
  namespace: string;
  /** `system:serviceaccount:<namespace>:<name>` */
  username: string;
  token: string;
  expiresAt: string;
  /** A kubeconfig with this token, the cluster's server and CA. */
  kubeconfig: string;
}

export interface Cluster {
  readonly name: string;
  readonly kind: ClusterKind;
  /** https://127.0.0.1:<port> */
  readonly server: string;
  /** The CA that signed the apiserver's serving certificate (one PEM block). */
  readonly caPem: string;
  /** Bearer token of `admin` (group system:masters). */
  readonly adminToken: string;
  readonly kubeconfigPath: string;
  readonly kubeconfig: string;
  /** kwok's kubelet endpoint (GPU clusters). */
  readonly kwokPort?: number;
  /** The CRI-format file that `pods/log` serves (GPU clusters). */
  readonly podLogFile?: string;
  readonly dataDir: string;
  readonly timings: readonly ComponentTiming[];
  mintCredential(opts: MintCredentialOptions): Promise<Credential>;
  /** Creates a kwok-managed GPU node and resolves when it is Ready (GPU clusters). */
  addGpuNode(node: GpuNodeDescription): Promise<void>;
  /** Stops kube-apiserver and starts it again on the same port and etcd data; resolves when ready. */
  restartApiServer(): Promise<void>;
  /** Pids of this cluster's live processes. */
  pids(): number[];
  stop(): Promise<void>;
}

export interface Fleet {
  readonly clusters: readonly Cluster[];
  /** The cluster of that name; throws when there is none. */
  cluster(name: string): Cluster;
  readonly dataDir: string;
  /** Per component, in start order. */
  readonly timings: readonly ComponentTiming[];
  /** Milliseconds from startFleet's call to every cluster ready. */
  readonly startMs: number;
  /** The real nodes started (empty unless `realNodes: true`). */
  readonly realNodes: readonly RealNode[];
  pids(): number[];
  stop(): Promise<void>;
}

/** A real kubelet and containerd joined to a GPU cluster of the bed (real-node/start.ts). */
export interface RealNodeTimings {
  containerdMs: number;
  /** kubelet spawned → Node Ready (and untainted). */
  nodeReadyMs: number;
  /** kubelet spawned → `nvidia.com/gpu` allocatable. */
  gpuAllocatableMs: number;
}

export interface RealNode {
  readonly name: string;
  readonly cluster: string;
  readonly layout: NodeLayout;
  readonly quirks: HostQuirks;
  /** Where its pods reach the cluster's apiserver: the `kubernetes` Service's endpoint (real-node/apiserver.ts). */
  readonly apiserver: { address: string; port: number };
  readonly podCidr: string;
  readonly pauseImage: string;
  readonly kubeletPort: number;
  /** The fake cards' ids, as Allocate names them in NVIDIA_VISIBLE_DEVICES (berth.dev/gpu-uuids). */
  readonly gpuIds: readonly string[];
  readonly binDir: string;
  readonly timings: RealNodeTimings;
  /** Lets the node pull from this registry (`127.0.0.1:<port>`) over plain HTTP; takes effect at once. */
  trustRegistry(host: string): void;
  /** Imports an OCI archive (bytes or a file) into the node's image store, as if pulled. */
  importImage(archive: Buffer | string): Promise<void>;
  /** Stops containerd and the kubelet and starts them again (containers keep running); resolves when Ready. */
  restartRuntime(): Promise<void>;
  /** Resident memory of the kubelet, containerd and the container shims. */
  memory(): { kubeletBytes: number; containerdBytes: number; shimBytes: number; shims: number };
  pids(): number[];
  /** Deletes its pods and the Node, then tears everything down. */
  stop(): Promise<void>;
}
