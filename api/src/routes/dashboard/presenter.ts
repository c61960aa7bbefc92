import type { dashboardOf } from "../../domain/dashboard/summary.ts";

type Summary = Awaited<ReturnType<typeof dashboardOf>>;
type SessionRow = Summary["me"]["running"][number];

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

const presentSession = (s: SessionRow) => ({
  id: s.id,
  name: s.display_name,
  phase: s.phase,
  gpu_model: s.gpu_model,
  gpu_count: s.gpu_count,
  cluster_id: s.cluster_id,
  since: iso(s.phase === "Paused" || s.phase === "Pausing" ? s.paused_at : s.started_at),
});

export function presentDashboard(d: Summary) {
  return {
    view: d.view,
    me: {
      running: d.me.running.map(presentSession),
      paused: d.me.paused.map(presentSession),
      period: {
        from: d.me.period.from.toISOString(),
        to: d.me.period.to.toISOString(),
        gpu_hours: Math.round(d.me.period.gpu_hours * 1000) / 1000,
        credits_spent: d.me.period.credits_spent,
      },
      balance: d.me.balance,
      hourly_rate: d.me.hourly_rate,
      days_left: d.me.days_left,
    },
    admin: d.admin && {
      sessions_by_phase: d.admin.sessions_by_phase,
      queue: d.admin.queue,
      spend: d.admin.spend.map((r) => ({
        organization_id: r.organization_id,
        organization_name: r.organization_name,
        project_id: r.project_id,
        project_name: r.project_name,
        spent: r.spent,
        gpu_hours: Math.round((r.gpu_seconds / 3600) * 1000) / 1000,
      })),
      fleet: d.admin.fleet,
      nodes: d.admin.nodes && {
        cordoned: d.admin.nodes.cordoned,
        not_ready: d.admin.nodes.notReady,
        items: d.admin.nodes.nodes,
      },
      storage: d.admin.storage,
    },
  };
}
