import type { BuildClusterRow } from "../../db/operations/images/buildClusters.ts";
import type { ImageBuildRow } from "../../db/operations/images/types.ts";
import { isoTimestamp } from "../../http/timestamp.ts";
import type { ImageBuild } from "./schemas.ts";

const iso = (d: Date | string | null) => (d === null ? null : isoTimestamp(new Date(d)));

export function presentBuild(b: ImageBuildRow, reused = b.reused): ImageBuild {
  return {
    id: b.id,
    image_id: b.image_id,
    owner: b.owner_id,
    organization_id: b.organization_id,
    state: b.state,
    failure_reason: b.failure_reason,
    base_image: b.base_image,
    cluster_id: b.cluster_id,
    digest: b.reported_digest,
    reused,
    log_truncated: b.log_truncated,
    created_at: iso(b.created_at) as string,
    job_created_at: iso(b.job_created_at),
    started_at: iso(b.started_at),
    finished_at: iso(b.finished_at),
  };
}

export function presentBuildCluster(r: BuildClusterRow) {
  return {
    cluster_id: r.cluster_id,
    marked_by: r.marked_by,
    marked_at: iso(r.marked_at) as string,
    push_secret: r.push_secret,
  };
}
