// A session's story as a timeline: its timestamps (created, queued, placed, started, paused, ended) and
// its conditions (what changed and why), oldest first. Billing's condition names the rate that applies: a
// borrowed session is charged at the offering's borrowed rate multiplier (docs/dev/fair-share.md).

export interface TimelineCondition {
  type: string;
  status: string;
  reason: string;
  message: string;
  last_transition_time: string;
}

export interface TimelineSession {
  created_at: string;
  queued_at?: string | null;
  scheduled_at?: string | null;
  started_at?: string | null;
  paused_at?: string | null;
  terminated_at?: string | null;
  cluster_id?: string | null;
  conditions?: TimelineCondition[];
  capacity_class?: "guaranteed" | "borrowed";
  /** The share of the offering's rate it pays (1 unless borrowed). */
  rate_multiplier?: number;
}

export interface TimelineEntry {
  at: string;
  title: string;
  detail: string;
  tone: "ok" | "warn" | "bad" | "info";
}

const CONDITION_TITLE: Record<string, [string, string]> = {
  // type: [title when True, title when False]
  Scheduled: ["Placed on a cluster", "Not placed"],
  Dispatched: ["Sent to its cluster", "Not sent to its cluster"],
  Ready: ["Ready", "Not ready"],
  Billable: ["Billing started", "Billing stopped"],
};

export function timeline(s: TimelineSession): TimelineEntry[] {
  const out: TimelineEntry[] = [{ at: s.created_at, title: "Created", detail: "", tone: "info" }];
  if (s.queued_at) out.push({ at: s.queued_at, title: "Queued", detail: "Waiting for a free GPU", tone: "warn" });
  if (s.scheduled_at)
    out.push({
      at: s.scheduled_at,
      title: "Scheduled",
      detail: s.cluster_id ? `on ${s.cluster_id}` : "",
      tone: "info",
    });
  if (s.started_at) out.push({ at: s.started_at, title: "Started", detail: "", tone: "ok" });
  if (s.paused_at) out.push({ at: s.paused_at, title: "Paused", detail: "", tone: "info" });
  if (s.terminated_at) out.push({ at: s.terminated_at, title: "Terminated", detail: "", tone: "info" });
  for (const c of s.conditions ?? []) {
    const [yes, no] = CONDITION_TITLE[c.type] ?? [c.type, `${c.type}: no`];
    const ok = c.status === "True";
    const tone = ok
      ? "ok"
      : c.status === "Unknown"
        ? "warn"
        : /Fail|Lost|Unreachable|Insufficient/.test(c.reason)
          ? "bad"
          : "warn";
    const message =
      c.type === "Billable" && ok && s.capacity_class === "borrowed"
        ? `usage is charged at the borrowed rate, ${s.rate_multiplier ?? 1}× the offering's rate`
        : c.message;
    out.push({
      at: c.last_transition_time,
      title: ok ? yes : no,
      detail: [c.reason, message].filter(Boolean).join(": "),
      tone,
    });
  }
  // Oldest first, to the second: a condition's time is whole seconds (Kubernetes' format), so one set in
  // the second the session was created must not come before "Created". Equal seconds keep the order above
  // (timestamps before conditions).
  return out
    .map((e, i) => ({ e, i, t: Math.floor((Date.parse(e.at) || 0) / 1000) }))
    .sort((a, b) => a.t - b.t || a.i - b.i)
    .map((x) => x.e);
}
