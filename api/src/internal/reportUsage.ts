// POST /internal/v1/usage: samples are stored once per (cluster, sample id); the operator's retries
// resend the same ids and are counted as duplicates. Billing turns stored samples into ledger entries.
//
// Every sample must name a session that is, or was, placed on the reporting cluster
// (docs/dev/internal-api.md): "was" because a session's last interval is reported after it was paused or moved.
// Anything else refuses the whole batch with 403 `forbidden`, and nothing is written.

import { insertUsageSamples, type UsageSampleInput } from "../db/operations/inventory/insertUsageSamples.ts";
import { sessionsOfCluster } from "../db/operations/sessions/workerQueries.ts";
import type { Deps } from "../deps.ts";
import { billSoon } from "../domain/credits/kick.ts";
import { Forbidden } from "../errors.ts";

export async function recordUsage(
  deps: Deps,
  clusterId: string,
  samples: UsageSampleInput[],
): Promise<{ accepted: number; duplicates: number }> {
  const named = [...new Set(samples.map((s) => s.session))];
  const known = await sessionsOfCluster(deps.db, clusterId, named);
  const foreign = named.filter((id) => !known.has(id));
  if (foreign.length > 0) {
    throw new Forbidden(`the batch names sessions that were never on cluster ${clusterId}; nothing was written`, {
      cluster_id: clusterId,
      sessions: foreign.slice(0, 20),
    });
  }
  const answer = await insertUsageSamples(deps.db, clusterId, samples);
  // Billing charges new samples once, off this request's path (api/src/domain/credits/kick.ts).
  if (answer.accepted > 0) billSoon(deps.credits);
  return answer;
}
