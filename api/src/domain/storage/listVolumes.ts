// The volumes the caller may see, a page at a time.

import { LABELS, resourcePath, type Volume, VolumeKind } from "@berth/crds";
import { listVolumes } from "../../db/operations/volumes/listVolumes.ts";
import type { Deps } from "../../deps.ts";
import type { Principal } from "../identity/principal.ts";
import { scopeOf } from "../identity/scope.ts";
import { ownsVolume, sharedWith } from "./access.ts";
import { storageRuntimeOf, unreachable } from "./runtime.ts";
import { priced, sharedMark, type VolumeView } from "./volumeParts.ts";

/** One page of the volumes the caller may see (own, their projects', their administered organizations'). */
export async function listVolumeViews(
  deps: Deps,
  principal: Principal,
  q: {
    page: number;
    size: number;
    organization_id?: string | undefined;
    project_id?: string | undefined;
    pool?: string | undefined;
    deleted?: boolean | undefined;
  },
): Promise<{ views: VolumeView[]; total: number }> {
  const s = scopeOf(principal);
  const { rows, total } = await listVolumes(
    deps.db,
    s.all
      ? { all: true }
      : {
          all: false,
          ownerId: s.userId,
          ownerOrganizationIds: [...s.organizations],
          organizationIds: [...s.adminOrganizations],
          projectIds: [...s.projects],
          shared: true,
        },
    {
      ...(q.organization_id ? { organizationId: q.organization_id } : {}),
      ...(q.project_id ? { projectId: q.project_id } : {}),
      ...(q.pool ? { pool: q.pool } : {}),
      ...(q.deleted ? { deletedAsOf: deps.clock.now() } : {}),
    },
    { limit: q.size, offset: (q.page - 1) * q.size },
  );
  const mine = rows;
  const crs = new Map<string, Volume>();
  if (mine.length > 0) {
    const list = await storageRuntimeOf(deps)
      .kube.json<{ items: unknown[] }>("GET", resourcePath(VolumeKind), {
        query: { labelSelector: `${LABELS.volumeId} in (${mine.map((r) => r.id).join(",")})` },
      })
      .catch(unreachable("listing volumes"));
    for (const i of list.items) {
      const r = VolumeKind.schema.safeParse(i);
      if (r.success) crs.set(r.data.metadata.name ?? "", r.data);
    }
  }
  return {
    views: await priced(
      deps,
      // A volume the caller sees only through a share says so (and how): the list marks it.
      mine.flatMap((row) => {
        const cr = crs.get(row.cr_name);
        // Listed through a share the resource no longer has (a write between the two): not the caller's.
        if (!ownsVolume(s, row) && sharedWith(s, cr).length === 0) return [];
        return [{ row, cr, ...sharedMark(s, row, cr) }];
      }),
    ),
    total,
  };
}
