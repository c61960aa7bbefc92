import type { Knex } from "knex";

/**
 * Appends a batch of log lines, keeping at most `maxBytes` per build: past it the batch is dropped and
 * the build marked truncated (one line says so). Answers whether anything was kept.
 */
export async function appendBuildLog(
  db: Knex,
  buildId: string,
  text: string,
  maxBytes: number,
  cursor?: { log_cursor_at: string | null; log_cursor_n: number },
): Promise<boolean> {
  return db.transaction(async (tx) => {
    // The cursor moves with the lines, even past the size limit (they are not sent again either).
    if (cursor) await tx("image_builds").where({ id: buildId }).update(cursor);
    const b = (await tx("image_builds").where({ id: buildId }).forUpdate().first("log_bytes", "log_truncated")) as
      | { log_bytes: number; log_truncated: boolean }
      | undefined;
    if (!b || b.log_truncated) return false;
    const size = Buffer.byteLength(text);
    if (b.log_bytes + size > maxBytes) {
      const note = `[berth] the log is longer than ${maxBytes} bytes; the rest is not kept\n`;
      await tx("image_build_logs").insert({ build_id: buildId, text: note });
      await tx("image_builds").where({ id: buildId }).update({ log_truncated: true });
      return false;
    }
    await tx("image_build_logs").insert({ build_id: buildId, text });
    await tx("image_builds")
      .where({ id: buildId })
      .update({ log_bytes: b.log_bytes + size });
    return true;
  });
}

export async function listBuildLogsAfter(
  db: Knex,
  buildId: string,
  afterSeq: string,
  limit = 200,
): Promise<{ seq: string; text: string }[]> {
  const rows = (await db("image_build_logs")
    .where({ build_id: buildId })
    .where("seq", ">", afterSeq)
    .orderBy("seq")
    .limit(limit)
    .select("seq", "text")) as { seq: string | number; text: string }[];
  return rows.map((r) => ({ seq: String(r.seq), text: r.text }));
}
