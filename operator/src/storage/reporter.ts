// The volume-sync tick: what this cluster's storage driver publishes about its capacity (its
// CSIStorageCapacity objects, per storage class), sent to the control plane, which turns it into the
// capacity reading of the pools served from here (api/src/domain/storage/readings.ts). A class's figure
// is its largest segment's: a volume must fit one segment, so they are never added together. With it go
// the storage node's system drive (the `node_disk` stand-in, from a node labelled berth.dev/storage-node)
// and the tick, so the control plane can tell a silent cluster's readings are stale.
import type { KubeApi } from "@berth/controllers/kube";
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

export interface StorageReporterDeps {
  kube: KubeApi;
  clusterId: string;
  intervalMs: number;
  send(report: StorageReport): Promise<void>;
  log: Logger;
}

export class StorageReporter {
  readonly #d: StorageReporterDeps;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(d: StorageReporterDeps) {
    this.#d = d;
  }

  async tick(): Promise<void> {
    const list = await this.#d.kube.json<{ items: CapacityItem[] }>(
      "GET",
      "/apis/storage.k8s.io/v1/csistoragecapacities",
    );
    const nodes = await this.#d.kube.json<{ items: NodeItem[] }>("GET", "/api/v1/nodes", {
      query: { labelSelector: LABELS.storageNode },
    });
    await this.#d.send(
      storageReportOf(this.#d.clusterId, list.items, new Date(), {
        nodes: nodes.items,
        intervalMs: this.#d.intervalMs,
      }),
    );
  }

  start(): void {
    const run = () => {
      this.#running = this.tick().catch((e: unknown) =>
        this.#d.log.warn({ error: String(e) }, "storage capacity report failed; retried next tick"),
      );
    };
    run();
    this.#timer = setInterval(run, this.#d.intervalMs);
    this.#timer.unref?.();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#running;
  }
}
