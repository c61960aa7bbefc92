import type { Knex } from "knex";
import { type PageRows, type PageWindow, selectPage } from "../../page.ts";
import type { VolumeRow } from "./types.ts";

/** Who the caller may see: everything, or the union of own volumes, organizations' and projects'. */
export interface VolumeVisibility {
  all: boolean;
  ownerId?: string;
  /** The caller's own volumes count only in organizations they still belong to. */
  ownerOrganizationIds?: readonly string[];
  organizationIds?: readonly string[];
  projectIds?: readonly string[];
  /** Also volumes shared with the caller (or one of `projectIds`), in `ownerOrganizationIds`. */
  shared?: boolean;
}

export interface VolumeFilter {
  organizationId?: string;
  projectId?: string;
  pool?: string;
  /** Deleted volumes still in their grace period at this time (restorable), instead of live ones. */
  deletedAsOf?: Date;
}

export async function listVolumes(
  db: Knex,
  v: VolumeVisibility,
  f: VolumeFilter,
  window: PageWindow,
): Promise<PageRows<VolumeRow>> {
  const q = db("volumes").select("*");
  if (f.deletedAsOf) q.whereNotNull("deleted_at").where("purge_after", ">", f.deletedAsOf);
  else q.whereNull("deleted_at");
  if (!v.all) {
    q.where((w) => {
      if (v.ownerId)
        w.orWhere((o) =>
          o.where({ owner_kind: "user", owner_id: v.ownerId }).whereIn("organization_id", v.ownerOrganizationIds ?? []),
        );
      if (v.organizationIds?.length) w.orWhereIn("organization_id", v.organizationIds);
      if (v.projectIds?.length)
        w.orWhere((o) => o.where("owner_kind", "project").whereIn("owner_id", v.projectIds ?? []));
      if (v.shared && v.ownerId)
        w.orWhere((o) =>
          o.whereIn("organization_id", v.ownerOrganizationIds ?? []).whereExists((e) =>
            e
              .select(db.raw("1"))
              .from("volume_shares as vs")
              .whereRaw("vs.volume_id = volumes.id")
              .where((x) =>
                x
                  .where({ "vs.subject_kind": "user", "vs.subject_id": v.ownerId })
                  .orWhere((p) => p.where("vs.subject_kind", "project").whereIn("vs.subject_id", v.projectIds ?? [])),
              ),
          ),
        );
      if (!v.ownerId && !v.organizationIds?.length && !v.projectIds?.length) w.whereRaw("false");
    });
  }
  if (f.organizationId) q.where("organization_id", f.organizationId);
  if (f.projectId) q.where({ owner_kind: "project", owner_id: f.projectId });
  if (f.pool) q.where("pool", f.pool);
  q.orderBy([
    { column: "created_at", order: "desc" },
    { column: "id", order: "desc" },
  ]);
  return selectPage<VolumeRow>(db, q, window);
}
