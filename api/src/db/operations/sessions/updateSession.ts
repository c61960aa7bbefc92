import type { Knex } from "knex";
import type { SessionRow } from "./types.ts";

export type SessionChanges = Partial<
  Pick<
    SessionRow,
    | "cluster_id"
    | "node"
    | "phase"
    | "desired_state"
    | "priority"
    | "queue_position"
    | "reason"
    | "message"
    | "queued_at"
    | "scheduled_at"
    | "started_at"
    | "paused_at"
    | "terminated_at"
    | "resource_deleted_at"
    | "gpu_model"
  >
>;

export async function updateSession(
  db: Knex,
  id: string,
  changes: SessionChanges,
  at: Date,
): Promise<SessionRow | undefined> {
  const [row] = await db("sessions")
    .where({ id })
    .update({ ...changes, updated_at: at })
    .returning("*");
  return row as SessionRow | undefined;
}

/** Takes the next mirror revision (monotonic per session, across mirrors and worker restarts). */
export async function nextMirrorRevision(db: Knex, id: string, restarts?: number): Promise<number> {
  const [row] = (await db("sessions")
    .where({ id })
    .update({
      mirror_revision: db.raw("mirror_revision + 1"),
      ...(restarts === undefined ? {} : { mirror_restarts: restarts }),
    })
    .returning(["mirror_revision"])) as { mirror_revision: number }[];
  if (!row) throw new Error(`session ${id} has no history row`);
  return row.mirror_revision;
}

/**
 * Takes the next mirror revision of many sessions in one statement (a placement pass's): each session
 * gets its own next one, above every revision it had. Rows are locked in id order, so two batches never
 * deadlock. Sessions without a history row are missing from the answer.
 */
export async function nextMirrorRevisions(db: Knex, ids: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += 1000) {
    const { rows } = (await db.raw(
      `WITH locked AS MATERIALIZED (
         SELECT id FROM sessions WHERE id = ANY(?::text[]) ORDER BY id FOR UPDATE
       )
       UPDATE sessions s SET mirror_revision = s.mirror_revision + 1
       FROM locked WHERE s.id = locked.id
       RETURNING s.id, s.mirror_revision`,
      [unique.slice(i, i + 1000)],
    )) as { rows: { id: string; mirror_revision: number }[] };
    for (const r of rows) out.set(r.id, r.mirror_revision);
  }
  return out;
}

/** The worker's bookkeeping of many sessions at once (revision and restarts written to mirrors). */
export async function mirrorStates(
  db: Knex,
  ids: readonly string[],
): Promise<Map<string, { revision: number; restarts: number }>> {
  const out = new Map<string, { revision: number; restarts: number }>();
  for (let i = 0; i < ids.length; i += 1000) {
    const rows = (await db("sessions")
      .whereIn("id", ids.slice(i, i + 1000) as string[])
      .select("id", "mirror_revision", "mirror_restarts")) as {
      id: string;
      mirror_revision: number;
      mirror_restarts: number;
    }[];
    for (const r of rows) out.set(r.id, { revision: r.mirror_revision, restarts: r.mirror_restarts });
  }
  return out;
}

/** The phase each of these sessions' rows holds (a new leader compares them with the resources it lists). */
export async function recordedPhases(db: Knex, ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < ids.length; i += 1000) {
    const rows = (await db("sessions")
      .whereIn("id", ids.slice(i, i + 1000) as string[])
      .select("id", "phase")) as { id: string; phase: string }[];
    for (const r of rows) out.set(r.id, r.phase);
  }
  return out;
}
