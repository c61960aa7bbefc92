import { z } from "zod";
import { ClusterIdParam } from "../clusters/schemas.ts";

const Timestamp = z.string().meta({ description: "RFC 3339, UTC." });
const Credits = z
  .string()
  .regex(/^-?\d+$/)
  .meta({ description: "Minor units (1 credit = 1,000,000), as a string." });

export const DashboardQuery = z.object({
  cluster: ClusterIdParam.optional().meta({
    description: "Narrow the fleet tiles to one cluster (the storage tile stays fleet-wide and says so).",
  }),
});

const SessionItem = z.object({
  id: z.string(),
  name: z.string().nullable(),
  phase: z.string(),
  gpu_model: z.string(),
  gpu_count: z.number().int(),
  cluster_id: z.string().nullable(),
  since: Timestamp.nullable().meta({ description: "Started (running) or paused (paused) at." }),
});

export const Dashboard = z
  .object({
    view: z.enum(["member", "admin", "super_admin"]),
    me: z.object({
      running: z.array(SessionItem),
      paused: z.array(SessionItem),
      period: z.object({
        from: Timestamp,
        to: Timestamp,
        gpu_hours: z.number(),
        credits_spent: Credits,
      }),
      balance: Credits.meta({ description: "The caller's own wallets, summed over their organizations." }),
      hourly_rate: Credits.meta({ description: "What the caller's running sessions cost per hour." }),
      days_left: z.number().nullable().meta({ description: "The balance at the hourly rate; null when nothing runs." }),
    }),
    admin: z
      .object({
        sessions_by_phase: z.array(z.object({ phase: z.string(), count: z.number().int() })),
        queue: z.object({ depth: z.number().int(), oldest_wait_seconds: z.number().int().nullable() }),
        spend: z.array(
          z.object({
            organization_id: z.string(),
            organization_name: z.string().nullable().meta({ description: "null if the organization is gone." }),
            project_id: z.string().nullable(),
            project_name: z.string().nullable().meta({ description: "null without a project or if it is gone." }),
            spent: Credits,
            gpu_hours: z.number(),
          }),
        ),
        fleet: z
          .array(
            z.object({
              cluster_id: z.string(),
              cluster_name: z.string(),
              gpu_model: z.string(),
              nodes: z.number().int(),
              total: z.number().int(),
              allocated: z.number().int(),
              free: z.number().int().meta({ description: "On nodes that are ready and not cordoned." }),
              allocated_idle: z
                .number()
                .int()
                .meta({ description: "Allocated GPUs whose sessions' mean utilisation over 15 minutes is under 5 %." }),
            }),
          )
          .nullable(),
        nodes: z
          .object({
            cordoned: z.number().int(),
            not_ready: z.number().int(),
            items: z.array(
              z.object({
                cluster_id: z.string(),
                name: z.string(),
                gpu_model: z.string().nullable(),
                schedulable: z.boolean(),
                ready: z.boolean(),
              }),
            ),
          })
          .nullable(),
        storage: z
          .object({
            status: z.enum(["ok", "no_pools", "unavailable"]),
            pool: z.string().nullable().meta({ description: "The largest pool: pools are never added together." }),
            source: z.string().nullable(),
            total_gb: z.number().nullable(),
            available_gb: z.number().nullable(),
            provisioned_gb: z.number().nullable(),
            pools: z.number().int(),
            shared_across_clusters: z
              .boolean()
              .meta({ description: "true when a cluster is selected: the pool is fleet-wide." }),
          })
          .nullable(),
      })
      .nullable(),
  })
  .meta({ id: "Dashboard" });
