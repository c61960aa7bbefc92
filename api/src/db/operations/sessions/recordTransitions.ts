import type { InterimStatus } from "@berth/crds";
import type { Knex } from "knex";
import type { SessionRow } from "./types.ts";

/** What a Session resource's new status puts in its history row (the worker's transitions). */
export interface SessionTransition {
  id: string;
  phase: string;
  desired_state: string;
  priority: number;
  node: string | null;
  queue_position: number | null;
  reason: string | null;
  message: string | null;
  queued_at: Date | null;
  scheduled_at: Date | null;
  started_at: Date | null;
  paused_at: Date | null;
  terminated_at: Date | null;
  /** Null keeps the row's: a status without a GPU model or cluster (paused, queued) keeps the last one. */
  gpu_model: string | null;
  /** The cluster it is placed on; appended to `placed_clusters` once. */
  cluster_id: string | null;
  /** The cards it holds (placement's choice on a cluster with a sharing layer); null: none. */
  gpu_cards: string[] | null;
  /** A status kept off the resource; null: the resource holds this one (any interim status is cleared). */
  interim_status: InterimStatus | null;
}

/**
 * Many sessions' transitions in one statement. The ids must be distinct (a statement updates a row once;
 * the caller splits batches at a repeated id). Rows are locked in id order, so two batches never
 * deadlock. Returns the updated rows; an id without a history row is not among them.
 */
export async function updateSessionsFromTransitions(
  db: Knex,
  transitions: readonly SessionTransition[],
  at: Date,
): Promise<SessionRow[]> {
  if (transitions.length === 0) return [];
  // The ids also as an array: Postgres guesses 100 rows for jsonb_to_recordset and, on a table of a few
  // thousand sessions, scanned all of it twice per batch (4,000 rows read for 2 updated); with `= ANY`
  // of an array it knows how many and reads them by the primary key.
  const ids = transitions.map((t) => t.id);
  const { rows } = (await db.raw(
    `WITH v AS MATERIALIZED (
       SELECT * FROM jsonb_to_recordset(?::jsonb) AS v(
         id text, phase text, desired_state text, priority integer, node text, queue_position integer,
         reason text, message text, queued_at timestamptz, scheduled_at timestamptz, started_at timestamptz,
         paused_at timestamptz, terminated_at timestamptz, gpu_model text, cluster_id text, gpu_cards jsonb,
         interim_status jsonb)
     ), locked AS MATERIALIZED (
       SELECT s.id FROM sessions s WHERE s.id = ANY(?::text[]) ORDER BY s.id FOR UPDATE
     )
     UPDATE sessions s SET
       phase = v.phase, desired_state = v.desired_state, priority = v.priority, node = v.node,
       queue_position = v.queue_position, reason = v.reason, message = v.message,
       queued_at = v.queued_at, scheduled_at = v.scheduled_at, started_at = v.started_at,
       paused_at = v.paused_at, terminated_at = v.terminated_at, updated_at = ?,
       gpu_model = COALESCE(v.gpu_model, s.gpu_model),
       cluster_id = COALESCE(v.cluster_id, s.cluster_id),
       gpu_cards = v.gpu_cards,
       interim_status = v.interim_status,
       placed_clusters = CASE
         WHEN v.cluster_id IS NULL OR v.cluster_id = ANY(s.placed_clusters) THEN s.placed_clusters
         ELSE array_append(s.placed_clusters, v.cluster_id) END
     FROM v, locked
     WHERE s.id = v.id AND locked.id = s.id AND s.id = ANY(?::text[])
     RETURNING s.*`,
    [JSON.stringify(transitions), ids, at, ids],
  )) as { rows: SessionRow[] };
  return rows;
}
