// Re-seals endpoint secrets not sealed under the current key (domain/webhooks/secretBox.ts): written before
// encryption, or under a key being retired. Each row is written only if it still holds what was read (a
// rotation in between wins; the next pass takes its values), and updated_at is left alone.
import type { Knex } from "knex";

export interface SealedSecrets {
  id: string;
  secret: string;
  previous_secret: string | null;
}

/** Up to `limit` endpoints whose secret or previous secret is not sealed with `currentPrefix`. */
export async function staleSecrets(db: Knex, currentPrefix: string, limit: number): Promise<SealedSecrets[]> {
  const like = `${currentPrefix.replace(/[\\%_]/g, "\\$&")}%`;
  return (await db("webhook_endpoints")
    .select("id", "secret", "previous_secret")
    .where((q) => q.whereRaw("secret NOT LIKE ?", [like]).orWhereRaw("previous_secret NOT LIKE ?", [like]))
    .orderBy("id")
    .limit(limit)) as SealedSecrets[];
}

/** Replaces `was` by `now` when the row still holds `was`; answers whether it did. */
export async function replaceSecrets(db: Knex, was: SealedSecrets, now: SealedSecrets): Promise<boolean> {
  const n = await db("webhook_endpoints")
    .where({ id: was.id, secret: was.secret })
    .whereRaw("previous_secret IS NOT DISTINCT FROM ?", [was.previous_secret])
    .update({ secret: now.secret, previous_secret: now.previous_secret });
  return n === 1;
}
