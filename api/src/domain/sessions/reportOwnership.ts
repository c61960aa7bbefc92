// The internal plane's rule for status reports (docs/dev/internal-api.md): an operator reports only
// on sessions of its own cluster: placed there now, or before (paused, or placed again elsewhere after a
// node loss or a silent spell). A former cluster's report is kept whatever its phase: its pod may
// outlive the move (its cluster was silent when the mirror was to go), and refusing the whole batch for
// it would stop that cluster's every report and turn all its sessions Unknown. The lifecycle reads only
// the current cluster's report. A session never placed there refuses the whole batch with 403.

import type { Db } from "../../db/knex.ts";
import { sessionsOfCluster } from "../../db/operations/sessions/workerQueries.ts";
import { Forbidden } from "../../errors.ts";

export async function assertReportsOwned(
  db: Db,
  clusterId: string,
  reports: readonly { session: string; phase: string }[],
): Promise<void> {
  if (reports.length === 0) return;
  const known = await sessionsOfCluster(db, clusterId, [...new Set(reports.map((r) => r.session))]);
  const foreign = reports.filter((r) => !known.has(r.session));
  if (foreign.length > 0) {
    throw new Forbidden(`the report names sessions that were never on cluster ${clusterId}`, {
      cluster_id: clusterId,
      sessions: [...new Set(foreign.map((r) => r.session))].slice(0, 20),
    });
  }
}
