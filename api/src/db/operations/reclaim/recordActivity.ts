// Activity reports (migration 20261126000500): one upsert statement per report, each time moved only
// forward (GREATEST), so a retried or reordered report never winds a clock back.
import type { Knex } from "knex";

export interface GatewayActivity {
  sessionId: string;
  userActiveAt: Date;
}

export interface OperatorActivity {
  sessionId: string;
  gpuUtilization: number | null;
  /** At or above the session's threshold. */
  gpuActive: boolean;
  notebookState: "ok" | "none" | "unreachable";
  /** Latest kernel or terminal activity; the observation's time while a kernel is busy. */
  notebookActiveAt: Date | null;
}

export async function recordSourceSeen(db: Knex, clusterId: string, source: string, at: Date): Promise<void> {
  await db.raw(
    `INSERT INTO activity_sources (cluster_id, source, seen_at) VALUES (?, ?, ?)
     ON CONFLICT (cluster_id, source) DO UPDATE SET seen_at = GREATEST(activity_sources.seen_at, EXCLUDED.seen_at)`,
    [clusterId, source, at],
  );
}

export async function recordGatewayActivity(
  db: Knex,
  clusterId: string,
  rows: readonly GatewayActivity[],
  now: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await db.raw(
    `INSERT INTO session_activity (session_id, cluster_id, user_active_at, updated_at)
     SELECT r.session_id, ?, r.at, ? FROM jsonb_to_recordset(?::jsonb) AS r(session_id text, at timestamptz)
     ON CONFLICT (session_id) DO UPDATE SET
       cluster_id = EXCLUDED.cluster_id,
       user_active_at = GREATEST(session_activity.user_active_at, EXCLUDED.user_active_at),
       updated_at = EXCLUDED.updated_at`,
    [clusterId, now, JSON.stringify(rows.map((r) => ({ session_id: r.sessionId, at: r.userActiveAt.toISOString() })))],
  );
}

export async function recordOperatorActivity(
  db: Knex,
  clusterId: string,
  observedAt: Date,
  rows: readonly OperatorActivity[],
  now: Date,
): Promise<void> {
  if (rows.length === 0) return;
  const records = rows.map((r) => ({
    session_id: r.sessionId,
    gpu_seen: r.gpuUtilization !== null,
    gpu_utilization: r.gpuUtilization,
    gpu_active: r.gpuActive,
    notebook_state: r.notebookState,
    notebook_active_at: r.notebookActiveAt?.toISOString() ?? null,
  }));
  await db.raw(
    `INSERT INTO session_activity AS a (session_id, cluster_id, gpu_seen_at, gpu_utilization, gpu_active_at,
                                        notebook_state, notebook_seen_at, notebook_active_at, updated_at)
     SELECT r.session_id, :cluster,
            CASE WHEN r.gpu_seen THEN :at::timestamptz END, r.gpu_utilization,
            CASE WHEN r.gpu_active THEN :at::timestamptz END,
            r.notebook_state, CASE WHEN r.notebook_state <> 'unreachable' THEN :at::timestamptz END,
            r.notebook_active_at, :now
     FROM jsonb_to_recordset(:records::jsonb) AS r(session_id text, gpu_seen boolean, gpu_utilization real,
          gpu_active boolean, notebook_state text, notebook_active_at timestamptz)
     ON CONFLICT (session_id) DO UPDATE SET
       cluster_id = EXCLUDED.cluster_id,
       gpu_seen_at = GREATEST(a.gpu_seen_at, EXCLUDED.gpu_seen_at),
       gpu_utilization = COALESCE(EXCLUDED.gpu_utilization, a.gpu_utilization),
       gpu_active_at = GREATEST(a.gpu_active_at, EXCLUDED.gpu_active_at),
       -- "unreachable" does not overwrite what the server last said: the signal turns unknown when
       -- notebook_seen_at goes stale, not at one failed probe (nor at a late report from another operator).
       notebook_state = CASE WHEN EXCLUDED.notebook_state = 'unreachable' THEN a.notebook_state ELSE EXCLUDED.notebook_state END,
       notebook_seen_at = GREATEST(a.notebook_seen_at, EXCLUDED.notebook_seen_at),
       notebook_active_at = GREATEST(a.notebook_active_at, EXCLUDED.notebook_active_at),
       updated_at = EXCLUDED.updated_at`,
    { cluster: clusterId, at: observedAt, now, records: JSON.stringify(records) },
  );
}
