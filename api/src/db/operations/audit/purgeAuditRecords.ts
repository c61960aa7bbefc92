// Retention: deletes up to `limit` of the oldest rows (by seq) that are older than `before`, stopping at
// the first younger one, in one short transaction that sets berth.audit_purge (the only way past the
// append-only trigger). Only a prefix of the chain goes, so verify never sees a gap from a purge.
import type { Knex } from "knex";

export async function purgeAuditRecords(db: Knex, before: Date, limit: number): Promise<number> {
  return db.transaction(async (tx): Promise<number> => {
    const oldest = (await tx("audit_log").select("id", "at").orderBy("seq").limit(limit)) as { id: string; at: Date }[];
    const ids: string[] = [];
    for (const r of oldest) {
      if (new Date(r.at) >= before) break;
      ids.push(r.id);
    }
    if (ids.length === 0) return 0;
    await tx.raw(`SELECT set_config('berth.audit_purge', 'on', true)`);
    return tx("audit_log").whereIn("id", ids).delete();
  });
}
