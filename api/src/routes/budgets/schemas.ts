import { z } from "zod";
import { Page } from "../../db/paging.ts";

const Timestamp = z.string().meta({ description: "RFC 3339, UTC." });
const Minor = z.string().meta({ description: "Minor units as a decimal string (1 credit = 1000000)." });

export const BudgetParams = z.object({
  organizationId: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9_-]+$/),
});

export const Budget = z
  .object({
    organization_id: z.string(),
    period: z.enum(["daily", "weekly", "monthly"]),
    amount: Minor.meta({ description: "The cap on what the organization's sessions are charged per period." }),
    spent: Minor.meta({ description: "Charged so far in the current period." }),
    remaining: Minor,
    period_start: Timestamp,
    resets_at: Timestamp,
    updated_by: z.string(),
    updated_at: Timestamp,
  })
  .meta({ id: "Budget" });

export const SetBudgetBody = z
  .object({
    period: z
      .enum(["daily", "weekly", "monthly"])
      .meta({ description: "UTC: days start at 00:00, weeks on Monday, months on the 1st." }),
    amount: z.string().regex(/^(0|[1-9][0-9]{0,17})$/, "a whole number of minor units, as a string"),
  })
  .meta({ id: "BudgetSet" });

export const ListBudgetsQuery = Page;
