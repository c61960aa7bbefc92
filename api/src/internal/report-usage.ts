// POST /internal/v1/usage: samples are stored once per (cluster, sample id); the operator's retries
// resend the same ids and are counted as duplicates. Billing turns stored samples into ledger entries.
import { insertUsageSamples, type UsageSampleInput } from "../db/operations/inventory/insertUsageSamples.ts";
import type { Deps } from "../deps.ts";

export async function recordUsage(
  deps: Deps,
  clusterId: string,
  samples: UsageSampleInput[],
): Promise<{ accepted: number; duplicates: number }> {
  return insertUsageSamples(deps.db, clusterId, samples);
}
