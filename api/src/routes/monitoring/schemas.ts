import { z } from "zod";
import { SCOPES } from "../../domain/monitoring/panels.ts";
import { Instant } from "../../http/timestamp.ts";
import { ClusterIdParam } from "../clusters/schemas.ts";

export const RANGES = { "15m": 900, "1h": 3600, "6h": 21_600, "24h": 86_400, "7d": 604_800, "30d": 2_592_000 } as const;

const Range = {
  range: z
    .enum(Object.keys(RANGES) as [keyof typeof RANGES, ...(keyof typeof RANGES)[]])
    .default("1h")
    .meta({
      description: "The last 15m, 1h, 6h, 24h, 7d or 30d, ending now (ignored when `from` and `to` are given).",
    }),
  from: Instant.optional().meta({ description: "Start, RFC 3339 (with `to`)." }),
  to: Instant.optional().meta({ description: "End, RFC 3339 (with `from`)." }),
};

const Name = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/, "a name");

export const PanelParams = z.object({ panelId: z.string().min(1).max(100) });

export const PanelQuery = z.object({
  ...Range,
  cluster: ClusterIdParam.optional().meta({
    description: "Cluster, for cluster, node and card panels (or to narrow a fleet panel).",
  }),
  node: Name.optional().meta({ description: "Node name, for node panels." }),
  card: z
    .string()
    .max(100)
    .regex(/^[A-Za-z0-9-]+$/, "a GPU UUID")
    .optional()
    .meta({ description: "GPU UUID, for card panels." }),
  session: z
    .string()
    .max(64)
    .regex(/^ses_[A-Za-z0-9]+$/, "a session id")
    .optional()
    .meta({ description: "Session id, for session panels." }),
});

export const RawQueryBody = z.object({
  query: z.string().min(1).max(2000).meta({ description: "PromQL (MetricsQL); narrowed by the caller's label scope." }),
  ...Range,
});

export const PanelDescriptor = z
  .object({
    id: z.string(),
    title: z.string(),
    scope: z.enum(SCOPES),
    unit: z.enum(["percent", "MiB", "W", "C", "count", "ms", "per_s"]),
    description: z.string(),
  })
  .meta({ id: "MonitoringPanel" });

export const PanelList = z.object({ data: z.array(PanelDescriptor) }).meta({ id: "MonitoringPanelList" });

export const PlotAnswer = z
  .object({
    range: z.object({
      from: z.number().int().meta({ description: "Unix seconds, snapped to the step." }),
      to: z.number().int(),
      step_seconds: z
        .number()
        .int()
        .meta({ description: "Chosen by the server so no series has more than max_points points." }),
      max_points: z.number().int(),
    }),
    timestamps: z.array(z.number().int()).meta({ description: "The time axis, Unix seconds, shared by every series." }),
    series: z.array(
      z.object({
        label: z.string(),
        labels: z.record(z.string(), z.string()),
        values: z
          .array(z.number().nullable())
          .meta({ description: "One per timestamp; null where there is no sample." }),
      }),
    ),
    truncated_series: z.number().int().meta({ description: "Series left out beyond the most an answer carries." }),
  })
  .meta({ id: "MonitoringSeries" });

export const PanelAnswer = PlotAnswer.extend({ panel: PanelDescriptor }).meta({ id: "MonitoringPanelAnswer" });
