import type { Knex } from "knex";
import type { ClusterRow } from "./types.ts";

export async function updateClusterSessionDomain(
  db: Knex,
  id: string,
  sessionDomain: string,
): Promise<ClusterRow | undefined> {
  const [row] = await db<ClusterRow>("clusters")
    .where({ id })
    .whereNull("deregistered_at")
    .update({ session_domain: sessionDomain })
    .returning("*");
  return row as ClusterRow | undefined;
}

/** The token that is accepted from now on; the previous one stops working. */
export async function setClusterOperatorToken(
  db: Knex,
  id: string,
  t: { jti: string; issuedAt: Date; expiresAt: Date },
): Promise<void> {
  await db<ClusterRow>("clusters").where({ id }).update({
    operator_token_jti: t.jti,
    operator_token_issued_at: t.issuedAt,
    operator_token_expires_at: t.expiresAt,
  });
}

export async function markClusterDeregistered(db: Knex, id: string, by: string | null, at: Date): Promise<void> {
  await db<ClusterRow>("clusters")
    .where({ id })
    .whereNull("deregistered_at")
    .update({ deregistered_at: at, deregistered_by: by, operator_token_jti: null });
}

export async function touchClusterReport(db: Knex, id: string, at: Date): Promise<void> {
  await db<ClusterRow>("clusters").where({ id }).update({ last_report_at: at });
}

/** Undo of a registration that failed half-way (no history to keep: nothing ever ran there). */
export async function deleteCluster(db: Knex, id: string): Promise<void> {
  await db<ClusterRow>("clusters").where({ id }).delete();
}
