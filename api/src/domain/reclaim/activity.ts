// POST /internal/v1/sessions/activity: a cluster's gateway or operator reports what it sees of its
// sessions' activity. Every session named must be one placed on that cluster (now or before), or the whole
// report is refused (403 `forbidden`) and nothing is written, as for usage. The GPU reading is judged
// against the session's own threshold here, so the row keeps only "last active" and "last seen".
import type { ActivityReport } from "@berth/crds/internal-plane";
import {
  recordGatewayActivity,
  recordOperatorActivity,
  recordSourceSeen,
} from "../../db/operations/reclaim/recordActivity.ts";
import type { Deps } from "../../deps.ts";
import { Forbidden } from "../../errors.ts";
import { reclaimPolicyOf } from "../catalog/reclaimPolicy.ts";
import { sessionsRuntimeOf } from "../sessions/runtime.ts";

type Parsed = { source: "gateway" | "operator"; observed_at: string; sessions: Record<string, unknown>[] };

export async function recordActivity(
  deps: Pick<Deps, "db" | "clock" | "sessions">,
  clusterId: string,
  report: ActivityReport,
): Promise<{ accepted: number }> {
  const r = report as Parsed;
  const ids = [...new Set(r.sessions.map((s) => s.session as string))];
  const rows = (
    ids.length === 0
      ? []
      : await deps
          .db("sessions")
          .whereIn("id", ids)
          .select("id", "cluster_id", "placed_clusters", "organization_id", "project_id", "owner_id")
  ) as {
    id: string;
    cluster_id: string | null;
    placed_clusters: string[] | null;
    organization_id: string;
    project_id: string | null;
    owner_id: string;
  }[];
  const known = new Map(
    rows
      .filter((x) => x.cluster_id === clusterId || (x.placed_clusters ?? []).includes(clusterId))
      .map((x) => [x.id, x]),
  );
  const foreign = ids.filter((id) => !known.has(id));
  if (foreign.length > 0)
    throw new Forbidden(`the report names sessions that were never on cluster ${clusterId}; nothing was written`, {
      cluster_id: clusterId,
      sessions: foreign.slice(0, 20),
    });
  const observedAt = new Date(r.observed_at);
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    if (report.source === "gateway") {
      await recordGatewayActivity(
        tx,
        clusterId,
        report.sessions.map((s) => ({ sessionId: s.session, userActiveAt: new Date(s.user_active_at) })),
        now,
      );
    } else {
      const policies = report.sessions.length > 0 ? await sessionsRuntimeOf(deps).catalog.policies() : [];
      await recordOperatorActivity(
        tx,
        clusterId,
        observedAt,
        report.sessions.map((s) => {
          const row = known.get(s.session);
          const threshold = reclaimPolicyOf(policies, {
            organizationId: row?.organization_id ?? "",
            projectId: row?.project_id ?? null,
            userId: row?.owner_id,
          }).gpuUtilizationPercent;
          const nb = s.notebook;
          const last = nb.last_activity ? new Date(nb.last_activity) : null;
          const busyAt = nb.busy ? observedAt : null;
          return {
            sessionId: s.session,
            gpuUtilization: s.gpu_utilization,
            gpuActive: s.gpu_utilization !== null && s.gpu_utilization >= threshold,
            notebookState: nb.state,
            notebookActiveAt: last && busyAt ? (last > busyAt ? last : busyAt) : (last ?? busyAt),
          };
        }),
        now,
      );
    }
    await recordSourceSeen(tx, clusterId, report.source, observedAt);
  });
  return { accepted: report.sessions.length };
}
