// The worker's pass that moves every endpoint secret under the current key (secretBox.ts): after
// encryption was turned on, and after a new key was put first in BERTH_WEBHOOK_SECRET_KEYS.
import type { Knex } from "knex";
import { replaceSecrets, staleSecrets } from "../../db/operations/webhooks/resealSecrets.ts";
import { SecretUnreadable, type WebhookSecretBox } from "./secretBox.ts";

/**
 * Seals again, under the current key, every endpoint secret that is not (plain, or under an older key);
 * answers how many endpoints it rewrote. One that does not open here is left as it is and counted in
 * `unreadable` (its deliveries fail until the key that sealed it is listed again).
 */
export async function resealSecrets(
  db: Knex,
  box: WebhookSecretBox,
  batch = 100,
): Promise<{ resealed: number; unreadable: number }> {
  const prefix = box.currentPrefix;
  let resealed = 0;
  let unreadable = 0;
  if (!prefix) return { resealed, unreadable };
  const skip = new Set<string>();
  for (;;) {
    const rows = (await staleSecrets(db, prefix, batch + skip.size)).filter((r) => !skip.has(r.id));
    if (rows.length === 0) return { resealed, unreadable };
    for (const r of rows) {
      const again = (v: string) => (v.startsWith(prefix) ? v : box.seal(box.open(v, r.id), r.id));
      try {
        const now = {
          id: r.id,
          secret: again(r.secret),
          previous_secret: r.previous_secret === null ? null : again(r.previous_secret),
        };
        if (await replaceSecrets(db, r, now)) resealed++;
      } catch (err) {
        if (!(err instanceof SecretUnreadable)) throw err;
        skip.add(r.id);
        unreadable++;
      }
    }
  }
}
