// What a build's Job and newest pod say, pure (builds/reconciler.ts applies it): the level to report, whether
// the Job has ended (its log is drained before the end is reported), and which pod's log to follow.
import type { BuildStatusReport } from "@berth/crds/internal-plane";
import type { Job, Pod } from "./observed.ts";

export type BuildReport = BuildStatusReport["reports"][number];

export interface BuildLevel {
  report: BuildReport;
  /** The Job completed or failed. */
  ended: boolean;
  /** The pod whose log is followed (it has left Pending). */
  followPod?: string;
}

export function planBuildLevel(o: { buildId: string; job: Job; pod?: Pod; now: Date }): BuildLevel {
  const at = o.now.toISOString();
  const createdAt = o.job.metadata.creationTimestamp ?? at;
  const podPhase = o.pod?.status?.phase;
  const followPod = o.pod && podPhase && podPhase !== "Pending" ? { followPod: o.pod.metadata.name } : {};
  const end = (o.job.status?.conditions ?? []).find(
    (c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True",
  );
  if (end)
    return {
      ended: true,
      ...followPod,
      report: {
        build: o.buildId,
        phase: end.type === "Complete" ? "Succeeded" : "Failed",
        job_created_at: createdAt,
        ...(end.type === "Failed" ? { message: (end.message ?? end.reason ?? "its Job failed").slice(0, 2048) } : {}),
        at,
      },
    };
  const running = podPhase === "Running" || podPhase === "Succeeded" || podPhase === "Failed";
  return {
    ended: false,
    ...followPod,
    report: { build: o.buildId, phase: running ? "Running" : "Pending", job_created_at: createdAt, at },
  };
}
