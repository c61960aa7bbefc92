import type { Knex } from "knex";
import { saveStorageCursors } from "../volumes/storageBilling.ts";

export interface DueSnapshot {
  snapshot_id: string;
  volume_id: string;
  organization_id: string;
  owner_kind: "user" | "project";
  owner_id: string;
  size_gb: number;
  /** When it stopped holding data: deleted, or failed (null while it holds some). */
  ended_at: Date | null;
  billed_until: Date;
  carry: string;
  charged: string;
  spans: number;
}

/**
 * Locks up to `limit` snapshots with storage not yet charged up to `until` (live ones) or up to their end
 * (deleted or failed ones), skipping those another biller holds.
 */
export async function lockDueSnapshots(tx: Knex.Transaction, until: Date, limit: number): Promise<DueSnapshot[]> {
  const r = (await tx.raw(
    `SELECT b.snapshot_id, s.volume_id, s.organization_id, s.owner_kind, s.owner_id, s.size_gb,
            least(s.deleted_at, s.failed_at) AS ended_at, b.billed_until,
            b.carry::text AS carry, b.charged::text AS charged, b.spans
       FROM billing_snapshots b JOIN volume_snapshots s ON s.id = b.snapshot_id
      WHERE b.billed_until < coalesce(least(s.deleted_at, s.failed_at, ?::timestamptz), ?::timestamptz)
      ORDER BY b.snapshot_id LIMIT ? FOR UPDATE OF b SKIP LOCKED`,
    [until, until, limit],
  )) as { rows: DueSnapshot[] };
  return r.rows;
}

export async function saveSnapshotBilling(
  tx: Knex.Transaction,
  rows: readonly { id: string; billed_until: Date; carry: bigint; charged: bigint; spans: number }[],
  at: Date,
): Promise<void> {
  await saveStorageCursors(tx, { table: "billing_snapshots", key: "snapshot_id" }, rows, at);
}
