import type { Knex } from "knex";
import type { NewConnectToken } from "./types.ts";

export async function insertConnectTokens(db: Knex, tokens: NewConnectToken[]): Promise<void> {
  if (tokens.length === 0) return;
  await db("connect_tokens").insert(
    tokens.map((t) => ({
      token_hash: t.tokenHash,
      session_id: t.sessionId,
      cr_name: t.crName,
      cluster_id: t.clusterId,
      user_id: t.userId,
      link: t.link,
      created_at: t.createdAt,
      expires_at: t.expiresAt,
    })),
  );
}
