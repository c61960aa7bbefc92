// POST /internal/v1/sessions/status: the newest report per (cluster, session) is kept in Postgres, where
// the worker's session controller reads it. Every named session must be, or have been, placed on the
// reporting cluster (domain/sessions/reportOwnership.ts).
import { touchClusterReport } from "../db/operations/clusters/updateCluster.ts";
import {
  type SessionStatusReportInput,
  upsertSessionStatusReports,
} from "../db/operations/inventory/upsertSessionStatusReports.ts";
import type { Deps } from "../deps.ts";
import { assertReportsOwned } from "../domain/sessions/reportOwnership.ts";

export async function recordSessionStatus(
  deps: Pick<Deps, "db" | "clock">,
  clusterId: string,
  reports: SessionStatusReportInput[],
): Promise<{ accepted: number }> {
  // Sessions domain: every named session must be this cluster's (403 forbidden, nothing written).
  await assertReportsOwned(deps.db, clusterId, reports);
  const accepted = await deps.db.transaction(async (tx) => {
    const n = await upsertSessionStatusReports(tx, clusterId, reports);
    await touchClusterReport(tx, clusterId, deps.clock.now());
    return n;
  });
  return { accepted };
}
