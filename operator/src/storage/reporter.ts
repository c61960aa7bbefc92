// The volume-sync tick: what this cluster's storage driver publishes about its capacity (its
// CSIStorageCapacity objects, per storage class), sent to the control plane, which turns it into the
// capacity reading of the pools served from here (api/src/domain/storage/readings.ts). A class's figure
// is its largest segment's: a volume must fit one segment, so they are never added together.
import type { KubeApi } from "@berth/controllers/kube";
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

export function storageReportOf(clusterId: string, items: CapacityItem[], at: Date): StorageReport {
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
    await this.#d.send(storageReportOf(this.#d.clusterId, list.items, new Date()));
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
