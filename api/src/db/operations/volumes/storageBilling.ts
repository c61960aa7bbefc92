import type { Knex } from "knex";

export interface DueVolume {
  volume_id: string;
  organization_id: string;
  owner_kind: "user" | "project";
  owner_id: string;
  deleted_at: Date | null;
  billed_until: Date;
  carry: string;
  charged: string;
  spans: number;
}

/**
 * Locks up to `limit` volumes with storage not yet charged up to `until` (live ones) or up to their
 * deletion (deleted ones), skipping those another biller holds.
 */
export async function lockDueVolumes(tx: Knex.Transaction, until: Date, limit: number): Promise<DueVolume[]> {
  const r = (await tx.raw(
    `SELECT b.volume_id, v.organization_id, v.owner_kind, v.owner_id, v.deleted_at, b.billed_until,
            b.carry::text AS carry, b.charged::text AS charged, b.spans
       FROM billing_volumes b JOIN volumes v ON v.id = b.volume_id
      WHERE b.billed_until < coalesce(least(v.deleted_at, ?::timestamptz), ?::timestamptz)
      ORDER BY b.volume_id LIMIT ? FOR UPDATE OF b SKIP LOCKED`,
    [until, until, limit],
  )) as { rows: DueVolume[] };
  return r.rows;
}

/** Each volume's sizes and from when, oldest first. */
export async function volumeSizes(
  db: Knex,
  ids: readonly string[],
): Promise<Map<string, { from: Date; sizeGb: number }[]>> {
  const out = new Map<string, { from: Date; sizeGb: number }[]>();
  if (ids.length === 0) return out;
  const rows = (await db("volume_sizes")
    .whereIn("volume_id", ids as string[])
    .orderBy([{ column: "volume_id" }, { column: "from_at" }])) as {
    volume_id: string;
    from_at: Date;
    size_gb: number;
  }[];
  for (const r of rows) {
    const list = out.get(r.volume_id) ?? [];
    list.push({ from: r.from_at, sizeGb: r.size_gb });
    out.set(r.volume_id, list);
  }
  return out;
}

export async function saveVolumeBilling(
  tx: Knex.Transaction,
  rows: readonly { volume_id: string; billed_until: Date; carry: bigint; charged: bigint; spans: number }[],
  at: Date,
): Promise<void> {
  await saveStorageCursors(
    tx,
    { table: "billing_volumes", key: "volume_id" },
    rows.map((r) => ({ ...r, id: r.volume_id })),
    at,
  );
}

/**
 * Where storage billing stands, per billed object, in one UPDATE for the batch: volumes and snapshots keep
 * the same cursor (billed until, the carried fraction, what was charged, how many spans).
 */
export async function saveStorageCursors(
  tx: Knex.Transaction,
  where: { table: "billing_volumes" | "billing_snapshots"; key: "volume_id" | "snapshot_id" },
  rows: readonly { id: string; billed_until: Date; carry: bigint; charged: bigint; spans: number }[],
  at: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await tx.raw(
    `UPDATE ?? b SET billed_until = u.until, carry = u.carry, charged = u.charged, spans = u.spans, updated_at = ?
       FROM (SELECT unnest(?::text[]) AS id, unnest(?::timestamptz[]) AS until, unnest(?::bigint[]) AS carry,
                    unnest(?::bigint[]) AS charged, unnest(?::int[]) AS spans) u
      WHERE b.?? = u.id`,
    [
      where.table,
      at,
      rows.map((r) => r.id),
      rows.map((r) => r.billed_until),
      rows.map((r) => r.carry.toString()),
      rows.map((r) => r.charged.toString()),
      rows.map((r) => r.spans),
      where.key,
    ],
  );
}

/** What billing says it charged each volume, and the ledger's storage charges of it (invariants). */
export async function storageChargeMismatches(db: Knex): Promise<Record<string, unknown>[]> {
  const r = (await db.raw(
    `SELECT b.volume_id, b.charged::text, coalesce(s.total, 0)::text AS charges FROM billing_volumes b
       LEFT JOIN (SELECT metadata->>'volume' AS volume_id, sum(amount) AS total FROM ledger_transactions
                   WHERE kind = 'charge' AND reason = 'storage' GROUP BY 1) s ON s.volume_id = b.volume_id
      WHERE b.charged <> coalesce(s.total, 0) LIMIT 20`,
  )) as { rows: Record<string, unknown>[] };
  return r.rows;
}
