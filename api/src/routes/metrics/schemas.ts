import { z } from "zod";
import { Instant } from "../../http/timestamp.ts";

const Credits = z
  .string()
  .regex(/^-?\d+$/)
  .meta({ description: "Minor units (1 credit = 1,000,000), as a string." });

export const UsageReportQuery = z.object({
  from: Instant.meta({ description: "Start, RFC 3339 (inclusive)." }),
  to: Instant.meta({ description: "End, RFC 3339 (exclusive); at most 366 days after `from`." }),
  format: z.enum(["json", "csv"]).default("json").meta({ description: "`csv` answers text/csv (RFC 4180)." }),
});

export const UsageReport = z
  .object({
    from: z.string(),
    to: z.string(),
    data: z.array(
      z.object({
        organization_id: z.string(),
        organization_name: z.string().nullable().meta({ description: "null if the organization is gone." }),
        project_id: z.string().nullable(),
        project_name: z.string().nullable().meta({ description: "null without a project or if it is gone." }),
        gpu_hours: z.number(),
        credits: Credits.meta({ description: "Charged in the range, reversals taken off." }),
      }),
    ),
    totals: z.object({ gpu_hours: z.number(), credits: Credits }),
  })
  .meta({ id: "UsageReport" });
