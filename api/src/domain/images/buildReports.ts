// What a build cluster's operator reports of the builds it runs (POST /internal/v1/image-builds/status
// and /logs, docs/dev/internal-api.md): the Job's creation and phase, and the pod's log lines. Written to
// the build's row; the worker's BuildLoop acts on the row (checks the digest in Berth's registry and
// publishes, or fails). A report naming a build of another cluster is refused whole (403, nothing
// written); a report about a build that has finished changes nothing.

import { LogCursor } from "@berth/crds/internal-plane";
import { appendBuildLog } from "../../db/operations/images/buildLogs.ts";
import type { ImageBuildRow } from "../../db/operations/images/types.ts";
import { ACTIVE_BUILD_STATES } from "../../db/operations/images/types.ts";
import type { Deps } from "../../deps.ts";
import { Forbidden } from "../../errors.ts";
import { reportedDigest } from "./buildJob.ts";

export interface BuildStatusInput {
  build: string;
  phase: "Pending" | "Running" | "Succeeded" | "Failed";
  job_created_at?: string | undefined;
  message?: string | undefined;
  at: string;
}

async function ownBuilds(
  deps: Pick<Deps, "db">,
  clusterId: string,
  ids: string[],
): Promise<Map<string, ImageBuildRow>> {
  const rows = (await deps.db("image_builds").whereIn("id", ids)) as ImageBuildRow[];
  const foreign = ids.filter((id) => rows.find((r) => r.id === id)?.cluster_id !== clusterId);
  if (foreign.length > 0)
    throw new Forbidden("these builds were never dispatched to this cluster; nothing was written", {
      builds: [...new Set(foreign)],
    });
  return new Map(rows.map((r) => [r.id, r]));
}

export async function recordBuildStatus(
  deps: Pick<Deps, "db" | "clock">,
  clusterId: string,
  reports: BuildStatusInput[],
): Promise<{ accepted: number }> {
  await ownBuilds(
    deps,
    clusterId,
    reports.map((r) => r.build),
  );
  let accepted = 0;
  await deps.db.transaction(async (tx) => {
    for (const r of [...reports].sort((a, b) => a.build.localeCompare(b.build))) {
      const row = (await tx("image_builds").where({ id: r.build }).forUpdate().first()) as ImageBuildRow | undefined;
      if (!row || !ACTIVE_BUILD_STATES.includes(row.state)) continue;
      const changes: Partial<ImageBuildRow> = { job_phase: r.phase, job_message: r.message ?? null };
      if (!row.job_created_at && r.job_created_at) changes.job_created_at = new Date(r.job_created_at);
      if (row.state === "queued" && r.phase !== "Pending") {
        changes.state = "running";
        changes.started_at = new Date(r.at);
      }
      await tx("image_builds").where({ id: r.build }).update(changes);
      accepted++;
    }
  });
  return { accepted };
}

export async function recordBuildLogs(
  deps: Pick<Deps, "db" | "config">,
  clusterId: string,
  buildId: string,
  lines: { at: string; text: string }[],
): Promise<{ accepted: number }> {
  await ownBuilds(deps, clusterId, [buildId]);
  const maxBytes = deps.config.images?.builds.logMaxBytes ?? 1_048_576;
  // The cursor is read under the build's lock: a batch sent again while the first is still being written
  // waits for it, then finds its lines already past the cursor.
  const kept = await deps.db.transaction(async (tx) => {
    const row = (await tx("image_builds").where({ id: buildId }).forUpdate().first()) as ImageBuildRow;
    if (!ACTIVE_BUILD_STATES.includes(row.state)) return [];
    const cursor = new LogCursor(row.log_cursor_at, row.log_cursor_n);
    const admit = cursor.reader();
    const admitted = lines.filter((l) => admit(l.at));
    if (admitted.length === 0) return [];
    const batch = `${admitted.map((l) => l.text).join("\n")}\n`;
    await appendBuildLog(tx, buildId, batch, maxBytes, { log_cursor_at: cursor.at, log_cursor_n: cursor.n });
    const digest = reportedDigest(batch);
    if (digest) await tx("image_builds").where({ id: buildId }).update({ reported_digest: digest });
    return admitted;
  });
  return { accepted: kept.length };
}
