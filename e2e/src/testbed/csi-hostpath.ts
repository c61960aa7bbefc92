// A real CSI driver for a GPU cluster of the bed with a real node: the hostpath plugin (its volumes are
// folders on this host, bind-mounted into the node's pods), the registrar that registers its socket with
// that node's kubelet, and the upstream external-provisioner against the cluster's apiserver, all host
// processes built by e2e/testbed/build-csi.sh. The provisioner publishes CSIStorageCapacity from the
// plugin's GetCapacity, which the operator's reporter turns into the pool's capacity (docs/dev/storage.md).
// With snapshots (the default), the upstream snapshot controller and csi-snapshotter run beside it, over the
// snapshot CRDs and a default VolumeSnapshotClass for the driver: VolumeSnapshots are cut by the plugin
// (a copy of the volume's folder) and claims restored from them are filled by it.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { installSnapshotCrds } from "../storage/snapshot-crds.ts";
import { KubeHttp } from "./kube.ts";
import { type ManagedProcess, spawnManaged } from "./process.ts";
import type { Cluster } from "./types.ts";

export const CSI_BUILD_SCRIPT = fileURLToPath(new URL("../../testbed/build-csi.sh", import.meta.url));
export const HOSTPATH_DRIVER = "hostpath.csi.bed.berth.dev";
export const HOSTPATH_STORAGE_CLASS = "berth-hostpath";
/** The node label (and CSI topology key) that ties a volume to the node whose folder holds it. */
export const HOSTPATH_TOPOLOGY_KEY = `topology.${HOSTPATH_DRIVER}/node`;
/** The driver's default VolumeSnapshotClass (deletion policy Delete: a VolumeSnapshot deleted removes its copy). */
export const HOSTPATH_SNAPSHOT_CLASS = "berth-hostpath-snapshots";
const BINARIES = [
  "csi-provisioner",
  "snapshot-controller",
  "csi-snapshotter",
  "hostpath-plugin",
  "registrar",
  "volume-probe",
] as const;

/**
 * The folder holding the binaries: env BERTH_TESTBED_CSI_BIN (vitest's global setup sets it), else the
 * build script's (builds them when the cache is cold: ~3 min of CPU, progress on stderr).
 */
export function findCsiBinaries(env: NodeJS.ProcessEnv = process.env): string {
  const given = env.BERTH_TESTBED_CSI_BIN;
  if (given && BINARIES.every((b) => existsSync(join(given, b)))) return given;
  const out = execFileSync("bash", [CSI_BUILD_SCRIPT], { stdio: ["ignore", "pipe", "inherit"], env })
    .toString()
    .trim();
  const dir = out.split("\n").at(-1) ?? "";
  if (!BINARIES.every((b) => existsSync(join(dir, b))))
    throw new Error(`${CSI_BUILD_SCRIPT} printed "${dir}", which lacks one of ${BINARIES.join(", ")}`);
  return dir;
}

export interface CsiHostpathOptions {
  /** The GPU cluster; the provisioner talks to its apiserver with the admin kubeconfig. */
  cluster: Cluster;
  /** The real node's name: the plugin's node id and the topology its volumes are tied to. */
  nodeName: string;
  /**
   * The node's kubelet root (its `plugins_registry` gets the registration socket). Absent: nothing
   * registers the plugin with a kubelet; volumes are provisioned but no pod can mount them.
   */
  kubeletRootDir?: string;
  /** State (volumes, sizes), sockets and logs. Removed on stop and before start. */
  dir: string;
  /** What GetCapacity gives out, in GiB. Default 100. */
  capacityGib?: number;
  storageClass?: string;
  /** Namespace of the CSIStorageCapacity objects. Default kube-system. */
  namespace?: string;
  /** How often the provisioner asks for capacity. Default 5 s (the upstream default is a minute). */
  capacityPollSeconds?: number;
  /** Default: findCsiBinaries(). */
  binDir?: string;
  /**
   * The snapshot CRDs, the snapshot controller, the csi-snapshotter and a default VolumeSnapshotClass for
   * the driver. Default true.
   */
  snapshots?: boolean;
  /** How long the parts may take to come up (and the kubelet to register the plugin). Default 60 s. */
  readyTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface RunningCsiHostpath {
  readonly driver: string;
  readonly storageClass: string;
  /** The default VolumeSnapshotClass, when snapshots run. */
  readonly snapshotClass?: string;
  /** Where volume `id` keeps its data on this host. */
  volumePath(id: string): string;
  /** Where snapshot `id` (its VolumeSnapshotContent's snapshotHandle) keeps its copy on this host. */
  snapshotPath(id: string): string;
  readonly processes: readonly ManagedProcess[];
  /** Milliseconds from start() to the plugin registered with the kubelet (absent without a kubelet). */
  readonly registeredMs?: number;
  stop(): Promise<void>;
}

const pidFile = (dir: string) => join(dir, "pids");

/** Same folder naming as the plugin's (e2e/testbed/csibin/cmd/hostpath-plugin). */
export function hostpathVolumePath(dir: string, id: string): string {
  return join(dir, "state", "volumes", encodeURIComponent(id.replaceAll("/", "~")));
}

export function hostpathSnapshotPath(dir: string, id: string): string {
  return join(dir, "state", "snapshots", encodeURIComponent(id.replaceAll("/", "~")));
}

/**
 * What a killed run left: its processes (by the pids it recorded, checked against their command line),
 * bind mounts of its volumes, and its folder. Safe to run when nothing is left.
 */
export function teardownCsiHostpath(dir: string): void {
  if (existsSync(pidFile(dir))) {
    for (const pid of readFileSync(pidFile(dir), "utf8").split("\n").filter(Boolean).map(Number)) {
      let cmd = "";
      try {
        cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      } catch {
        continue;
      }
      if (!cmd.includes(dir)) continue; // the pid was reused by something not ours
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
      }
    }
  }
  for (const m of mountsOf(dir).reverse()) {
    try {
      execFileSync("umount", ["-l", m], { stdio: "ignore" });
    } catch {}
  }
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Mount points whose source is one of this driver's volumes (the kubelet's targets for them): mounts of
 * the volumes folder's filesystem whose root (mountinfo's fourth field, a path within that filesystem)
 * lies under the volumes folder.
 */
export function mountsOf(dir: string): string[] {
  const volumes = join(dir, "state", "volumes");
  const table = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const f = line.split(" ");
      return { dev: f[2] ?? "", root: unescapeMount(f[3] ?? ""), at: unescapeMount(f[4] ?? "") };
    });
  // The mount that holds the volumes folder: the longest mount point above it that shows its whole filesystem.
  const home = table
    .filter((m) => m.root === "/" && (volumes === m.at || volumes.startsWith(m.at === "/" ? "/" : `${m.at}/`)))
    .sort((a, b) => b.at.length - a.at.length)[0];
  if (!home) return [];
  const within = home.at === "/" ? volumes : volumes.slice(home.at.length);
  return table.filter((m) => m.dev === home.dev && m.root.startsWith(`${within}/`)).map((m) => m.at);
}

const unescapeMount = (s: string) =>
  s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));

async function waitFor<T>(
  what: string,
  deadline: number,
  probe: () => Promise<T | undefined>,
  procs: ManagedProcess[],
) {
  for (;;) {
    const dead = procs.find((p) => p.hasExited());
    if (dead) throw new Error(`${dead.name} exited while waiting for ${what}:\n${dead.tail(15)}`);
    const got = await probe().catch(() => undefined);
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error(`${what}: not within the deadline`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startCsiHostpath(o: CsiHostpathOptions): Promise<RunningCsiHostpath> {
  const t0 = Date.now();
  const log = o.log ?? (() => {});
  const bin = o.binDir ?? findCsiBinaries();
  const storageClass = o.storageClass ?? HOSTPATH_STORAGE_CLASS;
  const namespace = o.namespace ?? "kube-system";
  const deadline = t0 + (o.readyTimeoutMs ?? 60_000);
  const snapshots = o.snapshots ?? true;
  teardownCsiHostpath(o.dir);
  mkdirSync(join(o.dir, "state"), { recursive: true });
  const socket = join(o.dir, "csi.sock");
  // The sidecars' own copy of the admin kubeconfig: the snapshot controller has no socket in its command
  // line, and a teardown after a kill knows its processes by this folder in theirs.
  const kubeconfig = join(o.dir, "kubeconfig");
  copyFileSync(o.cluster.kubeconfigPath, kubeconfig);
  const k = new KubeHttp({ server: o.cluster.server, caPem: o.cluster.caPem, token: o.cluster.adminToken });
  const procs: ManagedProcess[] = [];
  const record = () => writeFileSync(pidFile(o.dir), procs.map((p) => `${p.pid}\n`).join(""));
  const stop = async () => {
    for (const p of [...procs].reverse()) await p.stop(5000);
    // What the provisioner published would read as the pool's capacity after the driver is gone.
    await k
      .raw(
        "DELETE",
        `/apis/storage.k8s.io/v1/namespaces/${namespace}/csistoragecapacities?labelSelector=${encodeURIComponent(`csi.storage.k8s.io/drivername=${HOSTPATH_DRIVER}`)}`,
      )
      .catch(() => undefined);
    k.close();
    teardownCsiHostpath(o.dir);
  };
  try {
    // Before the provisioner starts: it watches VolumeSnapshots for claims restored from them.
    if (snapshots) await installSnapshotCrds(o.cluster, Math.max(1000, deadline - Date.now()));
    await k.ensure("/apis/storage.k8s.io/v1/csidrivers", {
      apiVersion: "storage.k8s.io/v1",
      kind: "CSIDriver",
      metadata: { name: HOSTPATH_DRIVER },
      spec: {
        attachRequired: false,
        podInfoOnMount: false,
        storageCapacity: true,
        volumeLifecycleModes: ["Persistent"],
        fsGroupPolicy: "File",
      },
    });
    // Immediate, not WaitForFirstConsumer: Berth's operator waits for a claim to bind before it makes the
    // pod (controllers/src/mirror/plan.ts), so a claim waiting for its first consumer would never bind.
    // Retain: a released claim keeps its data for the volume's next session (docs/dev/storage.md).
    await k.ensure("/apis/storage.k8s.io/v1/storageclasses", {
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: { name: storageClass },
      provisioner: HOSTPATH_DRIVER,
      reclaimPolicy: "Retain",
      volumeBindingMode: "Immediate",
    });

    procs.push(
      spawnManaged({
        name: "hostpath-plugin",
        command: join(bin, "hostpath-plugin"),
        args: [
          `--endpoint=${socket}`,
          `--drivername=${HOSTPATH_DRIVER}`,
          `--nodeid=${o.nodeName}`,
          `--state-dir=${join(o.dir, "state")}`,
          `--capacity-gib=${o.capacityGib ?? 100}`,
        ],
        logFile: join(o.dir, "hostpath-plugin.log"),
      }),
    );
    record();
    await waitFor("the plugin's socket", deadline, async () => (existsSync(socket) ? true : undefined), procs);

    let registeredMs: number | undefined;
    if (o.kubeletRootDir) {
      const registry = join(o.kubeletRootDir, "plugins_registry");
      mkdirSync(registry, { recursive: true });
      procs.push(
        spawnManaged({
          name: "csi-registrar",
          command: join(bin, "registrar"),
          args: [`--csi-address=${socket}`, `--plugin-registration-dir=${registry}`],
          logFile: join(o.dir, "registrar.log"),
        }),
      );
      record();
      // The kubelet writes the driver into the node's CSINode (with its topology key) once registered.
      await waitFor(
        `the kubelet of ${o.nodeName} to register ${HOSTPATH_DRIVER}`,
        deadline,
        async () => {
          const res = await k.raw<{ spec?: { drivers?: { name: string }[] } }>(
            "GET",
            `/apis/storage.k8s.io/v1/csinodes/${o.nodeName}`,
          );
          return res.body?.spec?.drivers?.some((d) => d.name === HOSTPATH_DRIVER) ? true : undefined;
        },
        procs,
      );
      registeredMs = Date.now() - t0;
      log(`${HOSTPATH_DRIVER} registered with the kubelet of ${o.nodeName} in ${registeredMs} ms`);
    }

    procs.push(
      spawnManaged({
        name: "csi-provisioner",
        command: join(bin, "csi-provisioner"),
        args: [
          `--csi-address=${socket}`,
          `--kubeconfig=${kubeconfig}`,
          // The claim's namespace and name reach the plugin, which names the volume after them.
          "--extra-create-metadata",
          "--enable-capacity",
          // Berth's class binds at once (above); the provisioner publishes only late-binding classes' else.
          "--capacity-for-immediate-binding",
          // A host process has no pod to own the capacity objects (which needs POD_NAME): no owner.
          "--capacity-ownerref-level=-1",
          `--capacity-poll-interval=${o.capacityPollSeconds ?? 5}s`,
          "--retry-interval-start=500ms",
          "--retry-interval-max=5s",
          "--v=2",
        ],
        env: { ...process.env, NAMESPACE: namespace },
        logFile: join(o.dir, "csi-provisioner.log"),
      }),
    );
    record();
    if (snapshots) {
      // Marked default: Berth names no class in its VolumeSnapshots (api/src/worker/snapshots.ts).
      await k.ensure("/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses", {
        apiVersion: "snapshot.storage.k8s.io/v1",
        kind: "VolumeSnapshotClass",
        metadata: {
          name: HOSTPATH_SNAPSHOT_CLASS,
          annotations: { "snapshot.storage.kubernetes.io/is-default-class": "true" },
        },
        driver: HOSTPATH_DRIVER,
        deletionPolicy: "Delete",
      });
      // The bed serves no VolumeGroupSnapshot CRDs: the feature is off rather than probed for at each start.
      const common = [
        `--kubeconfig=${kubeconfig}`,
        "--leader-election=false",
        "--feature-gates=CSIVolumeGroupSnapshot=false",
        "--retry-interval-start=500ms",
        "--retry-interval-max=5s",
        "--v=2",
      ];
      procs.push(
        spawnManaged({
          name: "snapshot-controller",
          command: join(bin, "snapshot-controller"),
          args: common,
          logFile: join(o.dir, "snapshot-controller.log"),
        }),
      );
      record();
      procs.push(
        spawnManaged({
          name: "csi-snapshotter",
          command: join(bin, "csi-snapshotter"),
          args: [
            `--csi-address=${socket}`,
            ...common,
            // The plugin copies the folder within the call: a large volume outlasts the default minute.
            "--timeout=10m",
          ],
          logFile: join(o.dir, "csi-snapshotter.log"),
        }),
      );
      record();
    }
    log(`${HOSTPATH_DRIVER} started (class ${storageClass}, node ${o.nodeName}${snapshots ? ", snapshots" : ""})`);
    return {
      driver: HOSTPATH_DRIVER,
      storageClass,
      ...(snapshots ? { snapshotClass: HOSTPATH_SNAPSHOT_CLASS } : {}),
      volumePath: (id) => hostpathVolumePath(o.dir, id),
      snapshotPath: (id) => hostpathSnapshotPath(o.dir, id),
      processes: procs,
      registeredMs,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
