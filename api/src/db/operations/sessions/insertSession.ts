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
> &
  Partial<
    Pick<
      SessionRow,
      | "offering_gpu_count"
      | "gpu_slices_per_card"
      | "gpu_slice_memory_mib"
      | "gpu_mig_profile"
      | "gpu_share_num"
      | "gpu_share_den"
      | "capacity_class"
      | "rate_permille"
    >
  >;

export async function insertSession(db: Knex, row: NewSessionRow): Promise<SessionRow> {
  return (await insertSessions(db, [row]))[0] as SessionRow;
}

/** Several new sessions in one statement; answered in the order given. */
export async function insertSessions(db: Knex, rows: readonly NewSessionRow[]): Promise<SessionRow[]> {
  if (rows.length === 0) return [];
  const inserted = (await db("sessions")
    .insert(rows.map((row) => ({ ...row, phase: "Pending", desired_state: "Running", updated_at: row.created_at })))
    .returning("*")) as SessionRow[];
  const byId = new Map(inserted.map((r) => [r.id, r]));
  return rows.map((r) => byId.get(r.id) as SessionRow);
}
