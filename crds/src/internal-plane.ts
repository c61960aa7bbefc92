// The internal plane's wire format (docs/dev/internal-api.md): the bodies the operator sends and the API
// validates, in one place for both. snake_case, JSON-safe, nothing from a Kubernetes object that the
// contract does not name.
import { z } from "zod";
import { ClusterId } from "./fields.ts";

const Instant = z.iso.datetime({ offset: true });
const Count = z.number().int().min(0).max(1_000_000);
/** A Kubernetes object name (node, pod, session resource). */
const ObjectName = z.string().min(1).max(253);

export const GpuDevice = z.object({
  index: z.number().int().min(0).max(1024),
  model: z.string().max(256).nullable().optional(),
  uuid: z.string().max(256).optional(),
  memory_mib: z.number().int().min(0).max(100_000_000).optional(),
  // With a GPU sharing layer (docs/dev/gpu-sharing.md): the card's cores (percent), the vGPUs it splits
  // into, its health, and what the node's pods hold on it.
  cores: z.number().int().min(0).max(100_000).optional(),
  split: z.number().int().min(0).max(10_000).optional(),
  healthy: z.boolean().optional(),
  memory_used_mib: z.number().int().min(0).max(100_000_000).optional(),
  cores_used: z.number().int().min(0).max(100_000).optional(),
  vgpus_used: z.number().int().min(0).max(10_000).optional(),
});

export const InventoryNode = z
  .object({
    name: ObjectName,
    gpu_model: z.string().max(256).nullable(),
    gpu_count: Count,
    gpu_allocatable: Count,
    gpu_in_use: Count,
    labels: z.record(z.string().max(317), z.string().max(63 * 4)).default({}),
    schedulable: z.boolean(),
    ready: z.boolean(),
    devices: z.array(GpuDevice).max(1024).default([]),
    /** The node's GPU sharing layer (its cards may hold slices); absent: whole cards only. */
    gpu_sharing: z.enum(["hami"]).optional(),
    /**
     * MIG instances the node advertises (`nvidia.com/mig-<profile>`, the device plugin's mixed strategy), per
     * profile: allocatable and held by pods. Absent: no MIG.
     */
    mig: z.record(z.string().min(1).max(63), z.object({ allocatable: Count, in_use: Count })).optional(),
  })
  .superRefine((n, ctx) => {
    const seen = new Set<number>();
    for (const [i, d] of n.devices.entries()) {
      if (seen.has(d.index))
        ctx.addIssue({
          code: "custom",
          path: ["devices", i, "index"],
          message: `device index ${d.index} appears twice`,
        });
      seen.add(d.index);
    }
  });

export const InventoryReport = z
  .object({
    cluster_id: ClusterId,
    observed_at: Instant,
    nodes: z.array(InventoryNode).max(20_000),
  })
  .superRefine((r, ctx) => {
    const seen = new Set<string>();
    for (const [i, n] of r.nodes.entries()) {
      if (seen.has(n.name))
        ctx.addIssue({ code: "custom", path: ["nodes", i, "name"], message: `node ${n.name} appears twice` });
      seen.add(n.name);
    }
  });

export const StatusReport = z.object({
  cluster_id: ClusterId,
  reports: z
    .array(
      z.object({
        session: ObjectName,
        phase: z.string().min(1).max(64),
        node: ObjectName.nullable().optional(),
        gpu_devices: z.array(z.unknown()).max(1024).nullable().optional(),
        reason: z.string().max(1024).nullable().optional(),
        message: z.string().max(32_768).nullable().optional(),
        observed_generation: z.number().int().min(0).nullable().optional(),
        at: Instant,
      }),
    )
    .max(5_000),
});

/** The longest usage interval an operator may use, and so the longest sample. */
export const MAX_SAMPLE_MS = 3_600_000;

export const UsageBatch = z.object({
  cluster_id: ClusterId,
  samples: z
    .array(
      z
        .object({
          id: z.string().min(1).max(256),
          session: ObjectName,
          start: Instant,
          end: Instant,
          gpu_seconds: z.number().min(0).max(1e9),
          gpu_utilization: z.number().min(0).max(100).nullable().optional(),
          gpu_memory_mib: z.number().int().min(0).max(2_147_483_647).nullable().optional(),
        })
        .refine((s) => Date.parse(s.end) >= Date.parse(s.start), { message: "end is before start", path: ["end"] })
        // An operator's interval is at most an hour (operator/src/config.ts); a longer span is not a sample.
        .refine((s) => Date.parse(s.end) - Date.parse(s.start) <= MAX_SAMPLE_MS, {
          message: "a sample spans at most an hour",
          path: ["end"],
        }),
    )
    .max(10_000),
});

/**
 * `POST /internal/v1/sessions/activity` (docs/dev/idle-and-limits.md): what a cluster sees of its running
 * sessions' activity. The gateway sends `user_active_at` (the last request or WebSocket frame a person
 * caused, not the application's own polling); the operator sends GPU utilisation and the notebook server's
 * state. Every report is also a heartbeat of its source: a silent source makes its signal unknown.
 */
export const ActivityReport = z.discriminatedUnion("source", [
  z.object({
    cluster_id: ClusterId,
    source: z.literal("gateway"),
    observed_at: Instant,
    sessions: z.array(z.object({ session: ObjectName, user_active_at: Instant })).max(10_000),
  }),
  z.object({
    cluster_id: ClusterId,
    source: z.literal("operator"),
    observed_at: Instant,
    sessions: z
      .array(
        z.object({
          session: ObjectName,
          /** The pod's GPU utilisation now (per container where the sharing layer tells, else its cards); null: no reading. */
          gpu_utilization: z.number().min(0).max(100).nullable(),
          notebook: z.object({
            /** ok: the notebook server answered; none: the session runs no notebook server; unreachable: it did not answer. */
            state: z.enum(["ok", "none", "unreachable"]),
            busy: z.boolean().default(false),
            /** Latest kernel or terminal activity the server reports. */
            last_activity: Instant.nullable().default(null),
          }),
        }),
      )
      .max(10_000),
  }),
]);
export type ActivityReport = z.input<typeof ActivityReport>;

export type GpuDevice = z.output<typeof GpuDevice>;
export type InventoryNode = z.output<typeof InventoryNode>;
/** `PUT /internal/v1/inventory`: the full set; nodes missing from it are removed by the control plane. */
export type InventoryReport = z.output<typeof InventoryReport>;
export type StatusReport = z.input<typeof StatusReport>;
export type UsageBatch = z.input<typeof UsageBatch>;

/** The control plane's answer to an inventory report. */
export interface InventoryAnswer {
  accepted: number;
  removed: number;
}

/**
 * What the storage driver of a cluster publishes, per storage class (the operator's volume-sync tick
 * reads the cluster's CSIStorageCapacity objects, else the driver's volume stats). `available_gb` is the
 * largest segment's: a volume must fit one, so segments are never added together.
 */
export const StorageReport = z.object({
  cluster_id: ClusterId,
  observed_at: Instant,
  classes: z
    .array(
      z.object({
        storage_class: z.string().min(1).max(253),
        available_gb: z.int().min(0),
        /** The filesystem's size, where the driver states it (its volume stats do; capacity objects do not). */
        total_gb: z.int().min(0).optional(),
        maximum_volume_gb: z.int().min(0).optional(),
        /**
         * `csi_capacity`: CSIStorageCapacity objects. `volume_stats`: the driver's volume statistics of a
         * claim of the class (NodeGetVolumeStats, as the kubelet's stats summary serves them), where the
         * driver publishes no capacity objects for the class: every claim of a shared pool sees its filesystem.
         */
        via: z.enum(["csi_capacity", "volume_stats"]),
        /** When the figure was measured, if before this report (volume stats are kept between mounts). */
        measured_at: Instant.optional(),
      }),
    )
    .max(1_000),
  /** The reporter's tick: a reading is stale after a few ticks without a report. */
  interval_ms: z.int().min(1).max(86_400_000).optional(),
  /** The storage node's system drive (nodes labelled berth.dev/storage-node): a stand-in, can be far off. */
  node_disk: z
    .object({ node: z.string().min(1).max(253), total_gb: z.int().min(0), available_gb: z.int().min(0) })
    .optional(),
  /**
   * Space used on each session volume's claim, as the kubelet of the node whose pod mounts it measures it
   * (its stats summary, through the node proxy). Claims on nodes whose kubelet serves no summary are
   * absent: their use is unknown.
   */
  volumes: z
    .array(z.object({ claim_name: z.string().min(1).max(253), used_gb: z.int().min(0), node: z.string().max(253) }))
    .max(10_000)
    .optional(),
});
export type StorageReport = z.infer<typeof StorageReport>;

/**
 * One scrape round an operator forwards to the control plane's metrics server (POST /internal/v1/metrics,
 * docs/dev/monitoring.md): Prometheus text per source. The control plane sets the cluster id and the
 * sessions' labels itself; `berth_*` labels in the text are dropped, and so is `instance` when the source
 * names one.
 */
export const MetricsForward = z.object({
  cluster_id: ClusterId,
  sources: z
    .array(
      z.object({
        job: z.string().regex(/^[a-z][a-z0-9-]{0,39}$/, "a job name: lowercase letters, digits and dashes"),
        /** Which replica of the job the text came from (a gateway pod's name); set as `instance` on every sample. */
        instance: z
          .string()
          .regex(/^[a-zA-Z0-9][a-zA-Z0-9._:[\]-]{0,252}$/, "a pod name or host:port")
          .optional(),
        text: z.string().max(16 * 1024 * 1024),
      }),
    )
    .max(1000),
});
export type MetricsForward = z.infer<typeof MetricsForward>;

/** A build's id as reports name it. */
const BuildId = z.string().regex(/^bld-[a-z0-9]{1,60}$/);

/**
 * POST /internal/v1/image-builds/status: what a build cluster's operator saw of its builds' Jobs (levels,
 * sent on a change and again on a resync). `job_created_at` once the Job exists; `phase` Running once
 * its pod runs; Succeeded or Failed when the Job ended (`message`: why it failed). The digest the builder
 * printed travels with the log (the control plane reads it from the lines it stores).
 */
export const BuildStatusReport = z.object({
  cluster_id: ClusterId,
  reports: z
    .array(
      z.object({
        build: BuildId,
        phase: z.enum(["Pending", "Running", "Succeeded", "Failed"]),
        job_created_at: Instant.optional(),
        message: z.string().max(2048).optional(),
        at: Instant,
      }),
    )
    .min(1)
    .max(500),
});
export type BuildStatusReport = z.infer<typeof BuildStatusReport>;

/** What a kubelet writes before each line with `timestamps=true`: RFC 3339, up to nine fraction digits. */
const LOG_STAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/;

/**
 * POST /internal/v1/image-builds/logs: lines of one build's pod log as the operator follows it, each with
 * the kubelet's timestamp. The operator may send a line twice (a restart follows the log from its start):
 * the control plane keeps a cursor (last timestamp, lines seen at it) and drops what it has.
 */
export const BuildLogBatch = z.object({
  cluster_id: ClusterId,
  build: BuildId,
  lines: z
    .array(
      z.object({
        at: z
          .string()
          .refine(
            (at) => normalizeLogStamp(at) !== null,
            "a kubelet log timestamp (RFC 3339, e.g. 2026-11-26T10:00:00.123456789Z)",
          ),
        text: z.string().max(65_536),
      }),
    )
    .min(1)
    .max(5_000),
});
export type BuildLogBatch = z.infer<typeof BuildLogBatch>;

/**
 * A kubelet log timestamp (RFC 3339 with up to nine fraction digits, trailing zeros trimmed; UTC or with
 * the node's offset) in UTC with all nine digits, so that timestamps compare as strings.
 */
export function normalizeLogStamp(stamp: string): string | null {
  const m = LOG_STAMP.exec(stamp);
  if (!m) return null;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  // The pattern's shape with no such instant (month 13, hour 99).
  if (Number.isNaN(ms)) return null;
  const seconds = new Date(ms).toISOString().slice(0, 19);
  return `${seconds}.${(m[2] ?? "").padEnd(9, "0")}Z`;
}

/**
 * Where a build's stored log ends: the newest timestamp and how many lines carried it. A log read again
 * from an earlier point (a re-followed stream, a restarted operator, `sinceTime`, which has whole seconds)
 * repeats lines: `reader()` admits, of one read in order, only the lines past the cursor, and moves it.
 * A line whose timestamp does not parse is not admitted.
 */
export class LogCursor {
  at: string | null;
  n: number;

  constructor(at: string | null = null, n = 0) {
    this.at = at;
    this.n = n;
  }

  reader(): (stamp: string) => boolean {
    const startAt = this.at;
    const startN = this.n;
    let seen = 0;
    return (raw) => {
      const s = normalizeLogStamp(raw);
      // A line without a timestamp cannot be placed: admitting it would move the cursor past every later line.
      if (s === null) return false;
      if (startAt !== null && s < startAt) return false;
      if (s === startAt && seen < startN) {
        seen++;
        return false;
      }
      if (s === this.at) this.n++;
      else {
        this.at = s;
        this.n = 1;
      }
      return true;
    };
  }
}
