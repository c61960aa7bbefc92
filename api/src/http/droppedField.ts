// What a zod object would strip silently from an answer: route.ts's response check makes such a field (a
// leaked column) an error instead.

/**
 * The path of the first field present in what the handler sent but absent from what the schema kept
 * (zod objects strip unknown keys silently), or undefined when none was dropped.
 */
export function droppedField(sent: unknown, kept: unknown): string | undefined {
  const p = droppedPath(sent, kept);
  return p === undefined ? undefined : `$${p}`;
}

/** droppedField's walk; runs on every answer (checkResponse), so it builds a path only for a field found. */
function droppedPath(sent: unknown, kept: unknown): string | undefined {
  if (Array.isArray(sent)) {
    if (!Array.isArray(kept)) return undefined;
    for (let i = 0; i < sent.length; i++) {
      const d = droppedPath(sent[i], kept[i]);
      if (d !== undefined) return `[${i}]${d}`;
    }
    return undefined;
  }
  if (sent === null || typeof sent !== "object" || sent instanceof Date) return undefined;
  if (kept === null || typeof kept !== "object") return undefined;
  const from = sent as Record<string, unknown>;
  const to = kept as Record<string, unknown>;
  for (const k in from) {
    if (!Object.hasOwn(from, k)) continue;
    const v = from[k];
    if (v === undefined) continue;
    if (!(k in to)) return `.${k}`;
    if (v === null || typeof v !== "object") continue;
    const d = droppedPath(v, to[k]);
    if (d !== undefined) return `.${k}${d}`;
  }
  return undefined;
}
