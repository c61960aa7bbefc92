// The internal plane's rule for status reports (CONTRACT.md, Operator calls 3): an operator reports only
// on sessions of its own cluster. "Of its cluster" = placed there now; a session placed there before
// (then paused, or placed again elsewhere after a node loss) may still be reported on as its mirror goes
// away (Terminating, Terminated). Anything else refuses the whole batch with 403 `forbidden`.

import type { Db } from "../../db/knex.ts";
import { sessionsOfCluster } from "../../db/operations/sessions/workerQueries.ts";
import { Forbidden } from "../../errors.ts";

const REMOVAL = new Set(["Terminating", "Terminated"]);

export async function assertReportsOwned(
  db: Db,
  clusterId: string,
  reports: readonly { session: string; phase: string }[],
): Promise<void> {
  if (reports.length === 0) return;
  const known = await sessionsOfCluster(db, clusterId, [...new Set(reports.map((r) => r.session))]);
  const foreign = reports.filter((r) => {
    const k = known.get(r.session);
    return !k || !(k.current || (k.ever && REMOVAL.has(r.phase)));
  });
  if (foreign.length > 0) {
    throw new Forbidden(`the report names sessions that are not on cluster ${clusterId}`, {
      cluster_id: clusterId,
      sessions: [...new Set(foreign.map((r) => r.session))].slice(0, 20),
    });
  }
}
