import type { UsageInterval } from "@berth/controllers";
import { gpuOccupancy, shareOfRow } from "@berth/crds";
import type { Knex } from "knex";
import type { SessionRow } from "../../db/operations/sessions/types.ts";

/** The runs that may still weigh in decayed usage (four half-lives back): fair share's standing and its reclaim order. */
export async function usageIntervals(db: Knex, now: Date, halfLifeMs: number): Promise<UsageInterval[]> {
  const since = new Date(now.getTime() - 4 * halfLifeMs);
  const rows = (await db("sessions")
    .whereNotNull("started_at")
    .where((q) => q.whereNull("terminated_at").orWhere("terminated_at", ">", since))
    .select(
      "organization_id",
      "project_id",
      "owner_id",
      "gpu_count",
      "gpu_slices_per_card",
      "gpu_share_num",
      "gpu_share_den",
      "started_at",
      "paused_at",
      "terminated_at",
      "phase",
    )) as Pick<
    SessionRow,
    | "organization_id"
    | "project_id"
    | "owner_id"
    | "gpu_count"
    | "gpu_slices_per_card"
    | "gpu_share_num"
    | "gpu_share_den"
    | "started_at"
    | "paused_at"
    | "terminated_at"
    | "phase"
  >[];
  return rows.map((r) => {
    const end = r.phase === "Running" ? undefined : (r.terminated_at ?? r.paused_at ?? undefined);
    return {
      org: r.organization_id,
      project: r.project_id ?? "",
      user: r.owner_id,
      cards: gpuOccupancy(r.gpu_count, r.gpu_slices_per_card ?? undefined, shareOfRow(r)),
      start: (r.started_at as Date).toISOString(),
      ...(end ? { end: end.toISOString() } : {}),
    };
  });
}
