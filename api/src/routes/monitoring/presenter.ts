import type { Panel } from "../../domain/monitoring/panels.ts";
import type { TimeRange } from "../../domain/monitoring/queryPanel.ts";
import { RANGES } from "./schemas.ts";

export const presentPanel = (p: Panel) => ({
  id: p.id,
  title: p.title,
  scope: p.scope,
  unit: p.unit,
  description: p.description,
});

/** `from`/`to` when both are given, else the named range ending now. */
export function rangeOf(
  q: { range: keyof typeof RANGES; from?: Date | undefined; to?: Date | undefined },
  now: Date,
): TimeRange {
  if (q.from && q.to) return { from: Math.floor(q.from.getTime() / 1000), to: Math.floor(q.to.getTime() / 1000) };
  const to = Math.floor(now.getTime() / 1000);
  return { from: to - RANGES[q.range], to };
}
