import type { Knex } from "knex";

// Connect tokens (api/src/domain/connect/): single-use, short-lived, bound to a session, its user and its
// cluster. Only the SHA-256 of a token is stored; the token itself exists in the link the user got and
// nowhere else. Redemption is one `UPDATE … WHERE redeemed_at IS NULL … RETURNING`, which is atomic across
// any number of API replicas sharing the database.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable("connect_tokens", (t) => {
    // sha256(token): the token carries 256 random bits, so a fast hash is enough (nothing to brute-force).
    t.binary("token_hash").primary();
    t.text("session_id").notNullable();
    t.text("cr_name").notNullable();
    t.text("cluster_id").notNullable();
    t.text("user_id").notNullable();
    t.text("link").notNullable(); // lab | terminal | code: which link the token was minted for
    t.timestamp("created_at", { useTz: true }).notNullable();
    t.timestamp("expires_at", { useTz: true }).notNullable();
    t.timestamp("redeemed_at", { useTz: true });
    t.index(["expires_at"]);
  });
  // The contract's "short-lived", enforced where no code path can forget it: at most 60 seconds.
  await knex.raw(`
    ALTER TABLE connect_tokens ADD CONSTRAINT connect_tokens_ttl_at_most_60s
      CHECK (expires_at > created_at AND expires_at <= created_at + interval '60 seconds');
    ALTER TABLE connect_tokens ADD CONSTRAINT connect_tokens_hash_is_sha256
      CHECK (octet_length(token_hash) = 32);
  `);
}
