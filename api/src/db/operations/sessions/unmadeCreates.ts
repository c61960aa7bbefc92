// Rows of creates cut off before their Session resource: ended by the create itself when the resource
// failed, by a create that takes over its key, or by the worker's sweep.
import type { Knex } from "knex";
import type { SessionRow } from "./types.ts";

/** Pending rows made in [since, before), not yet past their resource's deletion. */
export async function pendingSessionRows(
  db: Knex,
  since: Date,
  before: Date,
): Promise<{ id: string; namespace: string; cr_name: string }[]> {
  return (await db("sessions")
    .where({ phase: "Pending" })
    .whereNull("resource_deleted_at")
    .where("created_at", ">=", since)
    .where("created_at", "<", before)
    .select("id", "namespace", "cr_name")) as { id: string; namespace: string; cr_name: string }[];
}

/** Ends a row still Pending as Failed (CreateFailed); undefined when it moved on meanwhile. */
export async function failPendingSession(
  db: Knex,
  id: string,
  message: string,
  at: Date,
): Promise<SessionRow | undefined> {
  const [row] = (await db("sessions")
    .where({ id, phase: "Pending" })
    .update({ phase: "Failed", reason: "CreateFailed", message, terminated_at: at, updated_at: at })
    .returning("*")) as SessionRow[];
  return row;
}
