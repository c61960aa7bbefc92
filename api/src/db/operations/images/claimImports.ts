import type { Knex } from "knex";
import type { PrivateImageRow } from "./types.ts";

/**
 * Takes up to `n` imports nobody holds (never claimed, or whose holder's claim ran out: a crashed
 * worker) for `worker` until `until`, oldest first. SKIP LOCKED: replicas never take the same one.
 */
export async function claimImports(
  db: Knex,
  worker: string,
  now: Date,
  until: Date,
  n: number,
): Promise<PrivateImageRow[]> {
  if (n <= 0) return [];
  const { rows } = (await db.raw(
    `UPDATE private_images SET claimed_by = ?, claimed_until = ?, attempts = attempts + 1, updated_at = ?
       WHERE id IN (
         SELECT id FROM private_images
          WHERE state = 'importing' AND (claimed_until IS NULL OR claimed_until < ?)
          ORDER BY created_at FOR UPDATE SKIP LOCKED LIMIT ?)
     RETURNING *`,
    [worker, until, now, now, n],
  )) as { rows: PrivateImageRow[] };
  return rows;
}
