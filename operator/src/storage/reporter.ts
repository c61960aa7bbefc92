// The volume-sync tick: what this cluster's storage driver publishes about its capacity (its
// CSIStorageCapacity objects, per storage class), sent to the control plane, which turns it into the
// capacity reading of the pools served from here (api/src/domain/storage/readings.ts). A class's figure
// is its largest segment's: a volume must fit one segment, so they are never added together. With it go
// the storage node's system drive (the `node_disk` stand-in, from a node labelled berth.dev/storage-node)
// and the tick, so the control plane can tell a silent cluster's readings are stale; and the space used on
// each session volume's claim, from the kubelet's stats summary of the nodes whose session pods mount one
// (through the node proxy; a node whose kubelet serves none, like the bed's kwok nodes, leaves its claims
// unmeasured: unknown, never guessed). A class for which the driver publishes no CSIStorageCapacity is
// read from the same summaries: the driver's volume stats of a claim of the class (its filesystem's size
// and free space: on a shared pool every claim sees the whole pool), `via: volume_stats`. That figure is
// kept between mounts for `volumeStatsKeepMs` (default an hour), so the pool does not fall back to
// `manual` whenever no session mounts a volume; the report says when it was measured.
import { type KubeApi, PeriodicPass } from "@berth/controllers/kube";
import { LABELS } from "@berth/crds";
import type { StorageReport } from "@berth/crds/internal-plane";
import type { Logger } from "pino";

interface CapacityItem {
  storageClassName?: string;
  capacity?: string;
  maximumVolumeSize?: string;
}

const UNITS: Record<string, number> = {
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
  Pi: 1024 ** 5,
};

/** A Kubernetes quantity in whole gigabytes as the API counts them (GiB, like the claims' sizes), rounded down. */
export function quantityGb(q: string | undefined): number | undefined {
  const m = q === undefined ? null : /^([0-9.]+)(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$/.exec(q);
  if (!m) return undefined;
  const bytes = Number(m[1]) * (UNITS[m[2] ?? ""] ?? 1);
  return Number.isFinite(bytes) ? Math.floor(bytes / 1024 ** 3) : undefined;
}

interface NodeItem {
  metadata?: { name?: string };
  status?: { capacity?: Record<string, string>; allocatable?: Record<string, string> };
}

/** The first labelled storage node's system drive (ephemeral-storage): capacity and allocatable. */
export function nodeDiskOf(nodes: NodeItem[]): StorageReport["node_disk"] {
  for (const n of nodes) {
    const total = quantityGb(n.status?.capacity?.["ephemeral-storage"]);
    const free = quantityGb(n.status?.allocatable?.["ephemeral-storage"]);
    if (n.metadata?.name && total !== undefined)
      return { node: n.metadata.name, total_gb: total, available_gb: Math.min(total, free ?? total) };
  }
  return undefined;
}

export function storageReportOf(
  clusterId: string,
  items: CapacityItem[],
  at: Date,
  extra: { nodes?: NodeItem[]; intervalMs?: number } = {},
): StorageReport {
  const byClass = new Map<string, { available: number; max?: number }>();
  for (const i of items) {
    const gb = quantityGb(i.capacity);
    if (!i.storageClassName || gb === undefined) continue;
    const max = quantityGb(i.maximumVolumeSize);
    const had = byClass.get(i.storageClassName);
    if (!had || gb > had.available)
      byClass.set(i.storageClassName, { available: gb, ...(max !== undefined ? { max } : {}) });
  }
  return {
    cluster_id: clusterId,
    observed_at: at.toISOString(),
    classes: [...byClass].map(([storage_class, c]) => ({
      storage_class,
      available_gb: c.available,
      ...(c.max !== undefined ? { maximum_volume_gb: c.max } : {}),
      via: "csi_capacity" as const,
    })),
    ...(extra.intervalMs ? { interval_ms: extra.intervalMs } : {}),
    ...(() => {
      const d = nodeDiskOf(extra.nodes ?? []);
      return d ? { node_disk: d } : {};
    })(),
  };
}

interface PodItem {
  spec?: { nodeName?: string; volumes?: { persistentVolumeClaim?: { claimName?: string } }[] };
}

interface StatsSummary {
  pods?: {
    volume?: {
      usedBytes?: number;
      capacityBytes?: number;
      availableBytes?: number;
      pvcRef?: { name?: string; namespace?: string };
    }[];
  }[];
}

/** A claim's filesystem as the driver's volume stats give it, in whole GiB rounded down. */
export interface ClaimFilesystem {
  claim: string;
  namespace: string;
  totalGb: number;
  availableGb: number;
}

/** Each volume claim's filesystem size and free space in a node's stats summary (where the driver states them). */
export function claimFilesystemsOf(summary: StatsSummary): ClaimFilesystem[] {
  const out: ClaimFilesystem[] = [];
  for (const p of summary.pods ?? [])
    for (const v of p.volume ?? []) {
      const claim = v.pvcRef?.name;
      const { capacityBytes: cap, availableBytes: free } = v;
      if (!claim?.startsWith("berth-vol-") || !v.pvcRef?.namespace) continue;
      if (typeof cap !== "number" || typeof free !== "number" || cap <= 0 || free < 0) continue;
      const gib = (b: number) => Math.floor(b / 1024 ** 3);
      out.push({
        claim,
        namespace: v.pvcRef.namespace,
        totalGb: gib(cap),
        availableGb: Math.min(gib(cap), gib(free)),
      });
    }
  return out;
}

/** A class's figure from its claims' volume stats: the largest filesystem's (never added together). */
export interface VolumeStatsReading {
  totalGb: number;
  availableGb: number;
  measuredAt: Date;
}

export function volumeStatsByClass(
  filesystems: ClaimFilesystem[],
  classOf: (f: ClaimFilesystem) => string | undefined,
  at: Date,
): Map<string, VolumeStatsReading> {
  const out = new Map<string, VolumeStatsReading>();
  for (const f of filesystems) {
    const cls = classOf(f);
    if (!cls) continue;
    const had = out.get(cls);
    if (!had || f.totalGb > had.totalGb || (f.totalGb === had.totalGb && f.availableGb < had.availableGb))
      out.set(cls, { totalGb: f.totalGb, availableGb: f.availableGb, measuredAt: at });
  }
  return out;
}

/**
 * Adds a volume-stats reading for each class the driver published no capacity objects for; the capacity
 * objects, when there are any, win (the contract's `csi` is the driver's own capacity report first).
 */
export function withVolumeStats(report: StorageReport, stats: Map<string, VolumeStatsReading>): StorageReport {
  const published = new Set(report.classes.map((c) => c.storage_class));
  const extra = [...stats]
    .filter(([cls]) => !published.has(cls))
    .map(([storage_class, r]) => ({
      storage_class,
      available_gb: r.availableGb,
      total_gb: r.totalGb,
      via: "volume_stats" as const,
      ...(r.measuredAt.toISOString() !== report.observed_at ? { measured_at: r.measuredAt.toISOString() } : {}),
    }));
  return extra.length > 0 ? { ...report, classes: [...report.classes, ...extra] } : report;
}

/** Nodes whose session pods mount a volume's claim (`berth-vol-…`). */
export function nodesMountingVolumes(pods: PodItem[]): string[] {
  const nodes = new Set<string>();
  for (const p of pods)
    if (p.spec?.nodeName && p.spec.volumes?.some((v) => v.persistentVolumeClaim?.claimName?.startsWith("berth-vol-")))
      nodes.add(p.spec.nodeName);
  return [...nodes];
}

/** Each volume claim's used space in a node's stats summary, in whole GiB rounded up. */
export function volumeUsageOf(node: string, summary: StatsSummary): NonNullable<StorageReport["volumes"]> {
  const out = new Map<string, number>();
  for (const p of summary.pods ?? [])
    for (const v of p.volume ?? []) {
      const claim = v.pvcRef?.name;
      if (!claim?.startsWith("berth-vol-") || typeof v.usedBytes !== "number" || v.usedBytes < 0) continue;
      out.set(claim, Math.max(out.get(claim) ?? 0, Math.ceil(v.usedBytes / 1024 ** 3)));
    }
  return [...out].map(([claim_name, used_gb]) => ({ claim_name, used_gb, node }));
}

export interface StorageReporterDeps {
  kube: KubeApi;
  clusterId: string;
  intervalMs: number;
  /** How long a class's last volume-stats figure is reported after its last measurement. Default 1 hour. */
  volumeStatsKeepMs?: number;
  /**
   * A node's kubelet stats summary. Default: through the apiserver's node proxy. (The bed's tests reach
   * their stand-in kubelet directly: the apiserver refuses to proxy to a node whose address is loopback,
   * "address not allowed", and the bed's nodes have only loopback addresses.)
   */
  statsSummary?: (node: string) => Promise<{ status: number; body?: unknown }>;
  send(report: StorageReport): Promise<void>;
  log: Logger;
}

export class StorageReporter {
  readonly #d: StorageReporterDeps;
  readonly #loop: PeriodicPass;
  /** Nodes already logged as unmeasured (once each). */
  readonly #unmeasured = new Set<string>();
  /** A claim's storage class never changes: read once per claim while it is mounted. */
  readonly #classOfClaim = new Map<string, string>();
  /** Each class's last volume-stats figure, kept between mounts. */
  readonly #volumeStats = new Map<string, VolumeStatsReading>();

  constructor(d: StorageReporterDeps) {
    this.#d = d;
    this.#loop = new PeriodicPass({
      intervalMs: d.intervalMs,
      pass: () => this.tick(),
      onError: (e) => d.log.warn({ error: String(e) }, "storage capacity report failed; retried next tick"),
      unref: true,
    });
  }

  async tick(): Promise<void> {
    const list = await this.#d.kube.json<{ items: CapacityItem[] }>(
      "GET",
      "/apis/storage.k8s.io/v1/csistoragecapacities",
    );
    const nodes = await this.#d.kube.json<{ items: NodeItem[] }>("GET", "/api/v1/nodes", {
      query: { labelSelector: LABELS.storageNode },
    });
    const now = new Date();
    const report = storageReportOf(this.#d.clusterId, list.items, now, {
      nodes: nodes.items,
      intervalMs: this.#d.intervalMs,
    });
    // The capacity report never waits on a kubelet: the use is measured within a bound, or left out.
    let timer: NodeJS.Timeout | undefined;
    const measured = await Promise.race([
      this.#kubeletStats(),
      new Promise<{ volumes: []; filesystems: [] }>((r) => {
        timer = setTimeout(
          () => r({ volumes: [], filesystems: [] }),
          Math.min(5_000, Math.max(100, this.#d.intervalMs / 2)),
        );
      }),
    ])
      .catch((e: unknown) => {
        this.#d.log.warn({ error: String(e) }, "measuring the volumes' use failed; sent without it");
        return { volumes: [], filesystems: [] };
      })
      .finally(() => clearTimeout(timer));
    const { volumes } = measured;
    for (const [cls, r] of volumeStatsByClass(
      measured.filesystems,
      (f) => this.#classOfClaim.get(`${f.namespace}/${f.claim}`),
      now,
    ))
      this.#volumeStats.set(cls, r);
    const keepMs = this.#d.volumeStatsKeepMs ?? 3_600_000;
    for (const [cls, r] of this.#volumeStats)
      if (now.getTime() - r.measuredAt.getTime() > keepMs) this.#volumeStats.delete(cls);
    const full = withVolumeStats(report, this.#volumeStats);
    await this.#d.send(volumes.length > 0 ? { ...full, volumes } : full);
  }

  async #kubeletStats(): Promise<{ volumes: NonNullable<StorageReport["volumes"]>; filesystems: ClaimFilesystem[] }> {
    const pods = await this.#d.kube.json<{ items: PodItem[] }>("GET", "/api/v1/pods", {
      query: { labelSelector: LABELS.sessionId },
    });
    const out: NonNullable<StorageReport["volumes"]> = [];
    const filesystems: ClaimFilesystem[] = [];
    for (const node of nodesMountingVolumes(pods.items)) {
      const res = this.#d.statsSummary
        ? await this.#d.statsSummary(node)
        : await this.#d.kube.request<StatsSummary>(
            "GET",
            `/api/v1/nodes/${encodeURIComponent(node)}/proxy/stats/summary`,
          );
      if (res.status === 200 && res.body && typeof res.body === "object") {
        out.push(...volumeUsageOf(node, res.body as StatsSummary));
        filesystems.push(...claimFilesystemsOf(res.body as StatsSummary));
      } else if (!this.#unmeasured.has(node)) {
        this.#unmeasured.add(node);
        this.#d.log.info(
          { node, status: res.status },
          "the node's kubelet serves no stats summary: its volumes' use is unknown",
        );
      }
    }
    // Only claims mounted now are remembered (a claim mounted again later is read again): bounded.
    const mounted = new Set(filesystems.map((f) => `${f.namespace}/${f.claim}`));
    for (const key of this.#classOfClaim.keys()) if (!mounted.has(key)) this.#classOfClaim.delete(key);
    for (const f of filesystems) {
      const key = `${f.namespace}/${f.claim}`;
      if (this.#classOfClaim.has(key)) continue;
      const claim = await this.#d.kube.request<{ spec?: { storageClassName?: string } }>(
        "GET",
        `/api/v1/namespaces/${encodeURIComponent(f.namespace)}/persistentvolumeclaims/${encodeURIComponent(f.claim)}`,
      );
      const cls = claim.status === 200 ? claim.body?.spec?.storageClassName : undefined;
      if (cls) this.#classOfClaim.set(key, cls);
    }
    return { volumes: out, filesystems };
  }

  /** Ticks at once, then every interval after each ends (a slow tick delays the next, never overlaps it). */
  start(): void {
    this.#loop.start();
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }
}
