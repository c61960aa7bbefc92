import type { Knex } from "knex";
import type { SnapshotRow, SnapshotState } from "./types.ts";

type NewSnapshot = Omit<
  SnapshotRow,
  "restore_size_bytes" | "failure" | "ready_at" | "failed_at" | "deleted_at" | "cluster_id"
> & { cluster_id: string | null };

/** The row and its billing state (charged from its creation): one transaction's writes. */
export async function insertSnapshot(db: Knex, row: NewSnapshot): Promise<SnapshotRow> {
  const [inserted] = await db<SnapshotRow>("volume_snapshots").insert(row).returning("*");
  await db("billing_snapshots").insert({
    snapshot_id: row.id,
    billed_until: row.created_at,
    updated_at: row.created_at,
  });
  return inserted as SnapshotRow;
}

/** A snapshot that is not deleted; `forUpdate` locks the row for the transaction. */
export async function findSnapshot(
  db: Knex,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<SnapshotRow | undefined> {
  const q = db<SnapshotRow>("volume_snapshots").where({ id }).whereNull("deleted_at").first();
  if (opts.forUpdate) q.forUpdate();
  return (await q) as SnapshotRow | undefined;
}

/** A volume's snapshots that are not deleted, newest first, one page and the total. */
export async function listSnapshotsOfVolume(
  db: Knex,
  volumeId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: SnapshotRow[]; total: number }> {
  const base = db<SnapshotRow>("volume_snapshots").where({ volume_id: volumeId }).whereNull("deleted_at");
  const [rows, count] = await Promise.all([
    base
      .clone()
      .orderBy([
        { column: "created_at", order: "desc" },
        { column: "id", order: "desc" },
      ])
      .limit(page.limit)
      .offset(page.offset),
    base.clone().count<{ n: string }[]>("* as n"),
  ]);
  return { rows: rows as SnapshotRow[], total: Number(count[0]?.n ?? 0) };
}

export async function updateSnapshot(
  db: Knex,
  id: string,
  patch: Partial<Omit<SnapshotRow, "id">>,
  opts: { whenState?: SnapshotState[] } = {},
): Promise<SnapshotRow | undefined> {
  const q = db<SnapshotRow>("volume_snapshots").where({ id });
  if (opts.whenState) q.whereIn("state", opts.whenState);
  const [row] = await q.update(patch).returning("*");
  return row as SnapshotRow | undefined;
}

/** Snapshots the worker still has to act on: being made or being deleted, oldest first. */
export async function pendingSnapshots(db: Knex, limit: number): Promise<SnapshotRow[]> {
  return (await db<SnapshotRow>("volume_snapshots")
    .whereIn("state", ["creating", "deleting"])
    .whereNull("deleted_at")
    .orderBy("created_at")
    .limit(limit)) as SnapshotRow[];
}

/** Gigabytes an owner's snapshots hold (failed ones hold none). */
export async function snapshotGbByOwner(db: Knex, kind: "user" | "project", id: string): Promise<number> {
  const r = await db("volume_snapshots")
    .where({ owner_kind: kind, owner_id: id })
    .whereNull("deleted_at")
    .whereNot("state", "failed")
    .sum<{ sum: string | null }>("size_gb as sum")
    .first();
  return Number(r?.sum ?? 0);
}

/** Volumes still being restored from the snapshot (their claim has not bound with its data yet). */
export async function restoringFrom(db: Knex, snapshotId: string): Promise<string[]> {
  const rows = await db("volumes")
    .where({ restored_from: snapshotId })
    .whereNull("restored_at")
    .whereNull("deleted_at")
    .select("id");
  return (rows as { id: string }[]).map((r) => r.id);
}

/** Volumes made from a snapshot whose claim has not bound yet, oldest first (the worker's to make). */
export async function pendingRestores(
  db: Knex,
  limit: number,
): Promise<{ id: string; restored_from: string; size_gb: number; pool: string; created_at: Date }[]> {
  return (await db("volumes")
    .whereNotNull("restored_from")
    .whereNull("restored_at")
    .whereNull("deleted_at")
    .orderBy("created_at")
    .limit(limit)
    .select("id", "restored_from", "size_gb", "pool", "created_at")) as {
    id: string;
    restored_from: string;
    size_gb: number;
    pool: string;
    created_at: Date;
  }[];
}

export async function markRestored(db: Knex, volumeId: string, at: Date): Promise<void> {
  await db("volumes").where({ id: volumeId }).update({ restored_at: at, updated_at: at });
}
