import type { Knex } from "knex";
import type { ConnectTokenRow } from "./types.ts";

export interface RedeemWhere {
  tokenHash: Buffer;
  clusterId: string;
  crName: string;
  now: Date;
}

/**
 * Marks the token redeemed and returns it, or undefined when it is not redeemable here and now.
 * One statement: Postgres takes the row lock, and a concurrent UPDATE re-checks `redeemed_at IS NULL`
 * after the first commits (READ COMMITTED re-evaluation), so exactly one caller across all replicas gets
 * the row back. A token presented at the wrong gateway or path is not consumed.
 */
export async function redeemConnectToken(db: Knex, w: RedeemWhere): Promise<ConnectTokenRow | undefined> {
  const rows = await db<ConnectTokenRow>("connect_tokens")
    .update({ redeemed_at: w.now })
    .where({ token_hash: w.tokenHash, cluster_id: w.clusterId, cr_name: w.crName })
    .whereNull("redeemed_at")
    .where("expires_at", ">", w.now)
    .returning("*");
  return rows[0];
}
