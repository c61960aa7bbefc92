// POST /internal/v1/sessions/status: for now the newest report per session is kept in Postgres. The
// sessions domain takes these over (Session status, SSE) and adds the check that each named session is
// assigned to the reporting cluster; until then only the body's cluster_id is checked (by the route).
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
