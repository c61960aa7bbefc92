import { z } from "zod";

const Timestamp = z.string().meta({ description: "RFC 3339, UTC." });

export const UsageQuery = z.object({
  points: z.coerce
    .number()
    .int()
    .min(1)
    .max(360)
    .default(60)
    .meta({ description: "How many of the latest samples the series holds (default 60, at most 360)." }),
});

export const UsagePoint = z
  .object({
    start: Timestamp,
    end: Timestamp,
    gpu_seconds: z.number().meta({ description: "GPU-seconds used in the interval (GPUs × seconds)." }),
    gpu_utilization: z
      .number()
      .nullable()
      .meta({ description: "Average GPU utilisation in the interval, 0–100 %, when the cluster exposes it." }),
    gpu_memory_mib: z
      .number()
      .int()
      .nullable()
      .meta({ description: "GPU memory in use at the end of the interval, when the cluster exposes it." }),
  })
  .meta({ id: "UsagePoint" });

export const SessionUsage = z
  .object({
    session_id: z.string(),
    latest: UsagePoint.nullable().meta({ description: "The most recent sample; null before the first one arrives." }),
    totals: z.object({
      samples: z.number().int(),
      gpu_seconds: z.number(),
      since: Timestamp.nullable(),
      until: Timestamp.nullable(),
    }),
    series: z.array(UsagePoint).meta({ description: "The latest samples, oldest first (for a sparkline)." }),
  })
  .meta({ id: "SessionUsage" });
