// The sessions list's filters live in the URL (deep links, back button, reload keep them).
import { PHASES, type Phase } from "./phases.ts";

export interface SessionsFilter {
  scope: "mine" | "all";
  phase: Phase | "";
  cluster: string;
  page: number;
}

export function filterFromQuery(q: URLSearchParams): SessionsFilter {
  const phase = q.get("state") ?? "";
  const page = Number(q.get("page"));
  return {
    scope: q.get("scope") === "all" ? "all" : "mine",
    phase: (PHASES as readonly string[]).includes(phase) ? (phase as Phase) : "",
    cluster: q.get("cluster") ?? "",
    page: Number.isInteger(page) && page > 0 ? page : 1,
  };
}

export function queryFromFilter(f: SessionsFilter): string {
  const q = new URLSearchParams();
  if (f.scope !== "mine") q.set("scope", f.scope);
  if (f.phase) q.set("state", f.phase);
  if (f.cluster) q.set("cluster", f.cluster);
  if (f.page > 1) q.set("page", String(f.page));
  const s = q.toString();
  return s ? `?${s}` : "";
}
