import type { Knex } from "knex";
import type { SessionRow } from "./types.ts";

export type NewSessionRow = Pick<
  SessionRow,
  | "id"
  | "cr_name"
  | "namespace"
  | "owner_id"
  | "organization_id"
  | "project_id"
  | "display_name"
  | "offering"
  | "preset"
  | "image"
  | "gpu_model"
  | "gpu_count"
  | "hourly_credit_rate"
  | "cluster_pin"
  | "priority"
  | "created_at"
>;

export async function insertSession(db: Knex, row: NewSessionRow): Promise<SessionRow> {
  const [inserted] = await db("sessions")
    .insert({ ...row, phase: "Pending", desired_state: "Running", updated_at: row.created_at })
    .returning("*");
  return inserted as SessionRow;
}
