import type { Knex } from "knex";
import { ENDED_PHASES } from "./types.ts";

/**
 * What a user's sessions hold or wait for: sessions that want to run (desired Running) and are not
 * ended, and their GPUs. Paused sessions (desired Paused) hold nothing and do not count; one being
 * resumed (desired Running, phase still Paused until the worker moves it) does.
 */
export async function countLiveForOwner(db: Knex, ownerId: string): Promise<OwnerTally> {
  return (await countLiveForOwners(db, [ownerId])).get(ownerId) ?? { sessions: 0, gpus: 0 };
}

/** What one owner holds or waits for: sessions and their GPUs. */
/** GPUs a session occupies: whole cards, or its share of one card (a 1/4 slice is 0.25). */
export const OCCUPANCY_SQL =
  "gpu_count::float8 * coalesce(gpu_share_num, 1) / coalesce(gpu_share_den, gpu_slices_per_card, 1)";

/** `gpus` is GPU occupancy: slices count by their share. */
export type OwnerTally = { sessions: number; gpus: number };

/**
 * Serializes the policy check and the insert of one user's sessions across API replicas: held until the
 * transaction ends. Two concurrent creates by the same user cannot both pass a "one more" check.
 */
export function lockOwner(tx: Knex.Transaction, ownerId: string): Promise<void> {
  return lockOwners(tx, [ownerId]);
}

/** `countLiveForOwner` for several owners in one statement; owners with nothing live are absent. */
export async function countLiveForOwners(db: Knex, ownerIds: readonly string[]): Promise<Map<string, OwnerTally>> {
  const rows = (await db("sessions")
    .whereIn("owner_id", ownerIds)
    .where({ desired_state: "Running" })
    .whereNotIn("phase", ENDED_PHASES)
    .groupBy("owner_id")
    .select(
      "owner_id",
      db.raw("count(*)::int as sessions"),
      db.raw(`coalesce(sum(${OCCUPANCY_SQL}), 0)::float8 as gpus`),
    )) as {
    owner_id: string;
    sessions: number;
    gpus: number;
  }[];
  return new Map(rows.map((r) => [r.owner_id, { sessions: r.sessions, gpus: r.gpus }]));
}

/**
 * `lockOwner` for several owners, in one order (sorted) so two batches never wait on each other's
 * owners crosswise; one statement, taken row after row in the array's order.
 */
export async function lockOwners(tx: Knex.Transaction, ownerIds: readonly string[]): Promise<void> {
  const keys = [...new Set(ownerIds)].sort().map((id) => `sessions:${id}`);
  await tx.raw(
    "SELECT pg_advisory_xact_lock(hashtextextended(k, 6)) FROM unnest(?::text[]) WITH ORDINALITY AS t(k, i) ORDER BY i",
    [keys],
  );
}
