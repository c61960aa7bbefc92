// Walks the chain in seq order, in batches, recomputing each row's hash in the database with the same
// function the insert trigger used (berth_audit_row_hash). The first kept row anchors the walk: rows
// before it were purged by retention, so its prev_hash cannot be checked.
import type { Knex } from "knex";

export interface ChainBreak {
  seq: string;
  id: string;
  /** hash: the row's content does not match its hash; link: its prev_hash is not the row before's hash;
   * gap: a seq is missing (a row deleted outside retention). */
  problem: "hash" | "link" | "gap";
}

export interface ChainVerdict {
  checked: number;
  firstSeq: string | null;
  lastSeq: string | null;
  broken: ChainBreak | null;
}

export async function verifyAuditChain(db: Knex, batch = 5000): Promise<ChainVerdict> {
  let after: string | null = null;
  let prevHash: string | null = null;
  let prevSeq: bigint | null = null;
  let checked = 0;
  let firstSeq: string | null = null;
  let lastSeq: string | null = null;
  for (;;) {
    const rows = (
      await db.raw(
        `SELECT id::text AS id, seq::text AS seq, prev_hash, hash, berth_audit_row_hash(prev_hash, a) AS recomputed
           FROM audit_log a WHERE (?::bigint IS NULL OR a.seq > ?::bigint) ORDER BY a.seq LIMIT ?`,
        [after, after, batch],
      )
    ).rows as { id: string; seq: string; prev_hash: string | null; hash: string; recomputed: string }[];
    for (const r of rows) {
      const seq = BigInt(r.seq);
      firstSeq ??= r.seq;
      if (r.recomputed !== r.hash)
        return { checked, firstSeq, lastSeq, broken: { seq: r.seq, id: r.id, problem: "hash" } };
      if (prevSeq !== null && seq !== prevSeq + 1n)
        return { checked, firstSeq, lastSeq, broken: { seq: r.seq, id: r.id, problem: "gap" } };
      if (prevSeq !== null && r.prev_hash !== prevHash)
        return { checked, firstSeq, lastSeq, broken: { seq: r.seq, id: r.id, problem: "link" } };
      prevHash = r.hash;
      prevSeq = seq;
      lastSeq = r.seq;
      checked++;
    }
    if (rows.length < batch) return { checked, firstSeq, lastSeq, broken: null };
    after = lastSeq;
  }
}
