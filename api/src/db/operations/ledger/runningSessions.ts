import type { Knex } from "knex";
import type { SessionRow } from "../sessions/types.ts";

/** Phases in which a session holds (or is about to hold) a GPU and is charged. */
export const CHARGED_PHASES = ["Starting", "Running", "Resuming", "Restarting"] as const;

/** Sessions meant to run and in a charged phase, oldest start first, by organization. */
export async function runningSessions(db: Knex): Promise<SessionRow[]> {
  return (await db("sessions")
    .where({ desired_state: "Running" })
    .whereIn("phase", [...CHARGED_PHASES])
    .orderBy([
      { column: "organization_id" },
      { column: "started_at", order: "asc", nulls: "last" },
      { column: "id" },
    ])) as SessionRow[];
}

export async function walletsOfOrganizations(db: Knex, organizationIds: string[]) {
  if (organizationIds.length === 0) return [];
  return db("wallets").whereIn("organization_id", organizationIds);
}

export async function alertsOf(db: Knex, sessionIds: string[]): Promise<{ session_id: string; kind: string }[]> {
  if (sessionIds.length === 0) return [];
  return (await db("billing_alerts").whereIn("session_id", sessionIds).select("session_id", "kind")) as {
    session_id: string;
    kind: string;
  }[];
}

/** Records an alert; false when it was already recorded (said once per episode). */
export async function recordAlert(db: Knex, sessionId: string, kind: "warned" | "paused", at: Date): Promise<boolean> {
  const r = (await db.raw(
    `INSERT INTO billing_alerts (session_id, kind, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING session_id`,
    [sessionId, kind, at],
  )) as { rows: unknown[] };
  return r.rows.length === 1;
}

export async function clearAlerts(db: Knex, sessionIds: string[]): Promise<void> {
  if (sessionIds.length === 0) return;
  await db("billing_alerts").whereIn("session_id", sessionIds).delete();
}
