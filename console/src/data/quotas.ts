// Pure helpers of the limits pages: the limits' names in words, a request's asked/granted lines, the
// inbox's grant form read back into the API's body, and the wizard's choice of offering.

export const LIMIT_LABEL: Record<string, string> = {
  max_gpus_per_user: "GPUs at once, per person",
  max_concurrent_sessions_per_user: "Sessions at once, per person",
  max_volume_gb_per_user: "Volume storage (GB), per person",
  max_session_hours: "Hours per session",
  max_gpus_per_project: "GPUs at once, per project",
  max_volume_gb_per_project: "Volume storage (GB), per project",
  max_gpus_per_organization: "GPUs at once, per organization",
  max_priority: "Highest queue priority",
  max_idle_timeout_minutes: "Longest idle timeout a session may ask (min)",
  keep_running_max: "Keep-running per run period",
};

export const limitLabel = (name: string) => LIMIT_LABEL[name] ?? name.replaceAll("_", " ");

export type QuotaStatus = "pending" | "approved" | "partially_approved" | "denied" | "cancelled";

export const QUOTA_STATUS_LABEL: Record<QuotaStatus, string> = {
  pending: "Pending",
  approved: "Approved",
  partially_approved: "Partly approved",
  denied: "Denied",
  cancelled: "Withdrawn",
};

export const QUOTA_STATUS_TONE: Record<QuotaStatus, string> = {
  pending: "tone-warn",
  approved: "tone-ok",
  partially_approved: "tone-ok",
  denied: "tone-bad",
  cancelled: "tone-muted",
};

/** "GPUs at once, per person: 4 → 8" per asked limit, with what was granted when it differs. */
export function askedLines(
  asked: Record<string, number>,
  current: Record<string, number | null>,
  granted: Record<string, number> | null,
): string[] {
  return Object.entries(asked).map(([name, value]) => {
    const was = current[name];
    const got = granted?.[name];
    const base = `${limitLabel(name)}: ${was ?? "no limit"} → ${value}`;
    if (granted === null) return base;
    return got === undefined ? `${base} (not granted)` : got === value ? base : `${base} (granted ${got})`;
  });
}

/**
 * The grant form's values as the approve body: undefined when everything asked is granted (the API's
 * default); otherwise the granted limits, those left empty not granted. A problem names the first bad one.
 */
export function grantBody(
  asked: Record<string, number>,
  inputs: Record<string, string>,
): { ok: true; limits: Record<string, number> | undefined } | { ok: false; limit: string; problem: string } {
  const limits: Record<string, number> = {};
  for (const [name, want] of Object.entries(asked)) {
    const raw = (inputs[name] ?? String(want)).trim();
    if (raw === "") continue;
    if (!/^\d+$/.test(raw)) return { ok: false, limit: name, problem: "A whole number, or empty to grant none of it." };
    const n = Number(raw);
    if (n > want) return { ok: false, limit: name, problem: `At most the ${want} asked for.` };
    limits[name] = n;
  }
  if (Object.keys(limits).length === 0)
    return { ok: false, limit: Object.keys(asked)[0] ?? "", problem: "Grant at least one limit, or deny the request." };
  const all = Object.entries(asked).every(([k, v]) => limits[k] === v);
  return { ok: true, limits: all ? undefined : limits };
}

export interface OfferingLike {
  name: string;
  gpu_model: string;
  gpu_count: number;
}

/**
 * The offering the wizard opens on: the first (in the catalog's order) whose model has GPUs free for its
 * count on some cluster; else the first whose model the fleet has at all; else the first.
 */
export function preferredOffering(
  offerings: readonly OfferingLike[],
  rows: readonly { gpu_model: string; free: number; total: number; largest_node: number }[],
): string | undefined {
  const fits = (o: OfferingLike) =>
    rows.some((r) => r.gpu_model === o.gpu_model && r.free >= o.gpu_count && r.largest_node >= o.gpu_count);
  const exists = (o: OfferingLike) => rows.some((r) => r.gpu_model === o.gpu_model && r.total > 0);
  return (offerings.find(fits) ?? offerings.find(exists) ?? offerings[0])?.name;
}
