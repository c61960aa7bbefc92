import type { Knex } from "knex";
import { ENDED_PHASES } from "../sessions/types.ts";
import { BILLABLE_COLUMNS, type BillableSession } from "./sessionsForBilling.ts";

/**
 * An organization's sessions the door has let in and that still want to run (queued, starting,
 * running, or resumed and not placed yet), oldest start first as the running-out watch orders them:
 * each is owed its minimum run before a new session is. `exceptId`: the session being resumed.
 */
export async function promisedSessions(
  db: Knex,
  organizationId: string,
  exceptId?: string,
): Promise<BillableSession[]> {
  const q = db("sessions")
    .select(...BILLABLE_COLUMNS)
    .where({ organization_id: organizationId, desired_state: "Running" })
    .whereNotIn("phase", [...ENDED_PHASES]);
  if (exceptId) q.whereNot("id", exceptId);
  return (await q.orderBy([
    { column: "started_at", order: "asc", nulls: "last" },
    { column: "created_at", order: "asc" },
    { column: "id", order: "asc" },
  ])) as BillableSession[];
}
