import type { Knex } from "knex";
import type { ConnectTokenRow } from "./types.ts";

/** Only to explain a refusal after redeemConnectToken returned nothing; never to grant. */
export async function findConnectToken(db: Knex, tokenHash: Buffer): Promise<ConnectTokenRow | undefined> {
  return db<ConnectTokenRow>("connect_tokens").where({ token_hash: tokenHash }).first();
}
