// The fair-share page's rows, pure (docs/dev/fair-share.md): an organization, its projects, each project's
// users, one row per GPU model a scope guarantees or holds (a scope with none still gets a row, so its
// usage and shares show), and what a reclaim log entry has come to.

export interface ModelLike {
  gpu_model: string;
  guaranteed: number;
  used: number;
  borrowed: number;
  lent: number;
}

export interface StandingLike {
  id: string;
  name: string;
  weight: number;
  fair_share: number;
  usage_share: number;
  weighted_share: number;
  decayed_usage_gpu_hours: number;
  models: ModelLike[];
}

export interface OrganizationLike extends StandingLike {
  projects: (StandingLike & { users: StandingLike[] })[];
}

export type Level = "organization" | "project" | "user";

export interface ShareRow {
  level: Level;
  id: string;
  name: string;
  /** The first row of a scope carries its shares; the rows of its other models leave them blank. */
  first: boolean;
  model: ModelLike | undefined;
  standing: StandingLike;
}

function rowsOf(level: Level, s: StandingLike): ShareRow[] {
  if (s.models.length === 0) return [{ level, id: s.id, name: s.name, first: true, model: undefined, standing: s }];
  return s.models.map((m, i) => ({ level, id: s.id, name: s.name, first: i === 0, model: m, standing: s }));
}

export function shareRows(o: OrganizationLike): ShareRow[] {
  return [
    ...rowsOf("organization", o),
    ...o.projects.flatMap((p) => [...rowsOf("project", p), ...p.users.flatMap((u) => rowsOf("user", u))]),
  ];
}

/** GPUs in card equivalents: whole numbers as they are, slices to two places. */
export function gpus(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2);
}

/** Decayed GPU-hours: minutes of use still show (a fresh fleet's usage is small). */
export function hours(h: number): string {
  if (h === 0) return "0";
  if (h < 0.01) return "< 0.01";
  return h < 10 ? h.toFixed(2) : h.toFixed(1);
}

/** A share (0–1) as a percentage. */
export function share(x: number): string {
  return `${(x * 100).toFixed(x > 0 && x < 0.1 ? 1 : 0)} %`;
}

/** weighted_share: 1 is exactly the fair share; above, more; the tone says which way. */
export function weighted(x: number): { text: string; tone: "ok" | "warn" | "info" } {
  return { text: `${x.toFixed(2)}×`, tone: x > 1.1 ? "warn" : x > 0 ? "ok" : "info" };
}

export interface ReclaimLike {
  paused_at: string | null;
  resumed_at: string | null;
  withdrawn_at: string | null;
}

/** Where a reclaim stands: warned, paused, resumed, or withdrawn (the guaranteed session found room). */
export function reclaimState(r: ReclaimLike): { text: string; tone: "ok" | "warn" | "info" } {
  if (r.withdrawn_at) return { text: "Withdrawn", tone: "info" };
  if (r.resumed_at) return { text: "Resumed", tone: "ok" };
  if (r.paused_at) return { text: "Paused", tone: "warn" };
  return { text: "Warned", tone: "warn" };
}
