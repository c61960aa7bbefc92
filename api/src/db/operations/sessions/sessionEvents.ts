import type { Knex } from "knex";
import type { SessionEventRow } from "./types.ts";

export interface NewSessionEvent {
  /** null on a `notification.created` row (its owner_id is the notified user). */
  session_id: string | null;
  owner_id: string;
  organization_id: string | null;
  project_id: string | null;
  type: string;
  payload: Record<string, unknown>;
}

/** Appends events; the NOTIFY trigger wakes every API replica at commit. Returns the rows' seq. */
export async function insertSessionEvents(db: Knex, events: readonly NewSessionEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = (await db("session_events")
    .insert(events.map((e) => ({ ...e, payload: JSON.stringify(e.payload) })))
    .returning("seq")) as { seq: string }[];
  return rows.map((r) => String(r.seq));
}

/** Events after `seq`, oldest first. */
export async function listSessionEventsAfter(db: Knex, seq: string, limit: number): Promise<SessionEventRow[]> {
  return (await db("session_events").where("seq", ">", seq).orderBy("seq", "asc").limit(limit)) as SessionEventRow[];
}

export async function lastSessionEventSeq(db: Knex): Promise<string> {
  const row = (await db("session_events").max({ seq: "seq" }).first()) as { seq: string | null } | undefined;
  return String(row?.seq ?? "0");
}

/** The oldest seq still kept (resume from before it is a gap the client must fill by listing). */
export async function firstSessionEventSeq(db: Knex): Promise<string> {
  const row = (await db("session_events").min({ seq: "seq" }).first()) as { seq: string | null } | undefined;
  return String(row?.seq ?? "0");
}

export async function purgeSessionEvents(db: Knex, olderThan: Date): Promise<number> {
  return db("session_events").where("created_at", "<", olderThan).delete();
}
