// What a session is using: its latest usage samples and the totals over all of them. The caller has
// been shown the session already (the route asks the sessions port first).
import {
  latestUsageSamples,
  type UsageSampleRow,
  type UsageTotals,
  usageTotals,
} from "../../db/operations/usage/sessionUsage.ts";
import type { Deps } from "../../deps.ts";

export type { UsageSampleRow, UsageTotals };

export async function sessionUsage(
  deps: Pick<Deps, "db">,
  sessionId: string,
  points: number,
): Promise<{ samples: UsageSampleRow[]; totals: UsageTotals }> {
  const [samples, totals] = await Promise.all([
    latestUsageSamples(deps.db, sessionId, points),
    usageTotals(deps.db, sessionId),
  ]);
  return { samples, totals };
}
