// What the volume verbs share (one file per verb beside this one: createVolume.ts, getVolume.ts, ...):
// the view a caller gets, the resource's reads and writes, who may see or change a volume, and the quota
// and room rules a size must pass. A volume is a row in Postgres (lists, quotas and pool totals, added up
// under a lock) and a Volume resource in the organization's namespace (what the operators reconcile).

import { KubeError } from "@berth/controllers/kube";
import { type Pool, type Volume, VolumeKind } from "@berth/crds";
import type { Knex } from "knex";
import { snapshotGbByOwner } from "../../db/operations/snapshots/snapshots.ts";
import { findVolumeById } from "../../db/operations/volumes/findVolumeById.ts";
import { provisionedByOwner, provisionedByPool } from "../../db/operations/volumes/provisioned.ts";
import type { VolumeRow } from "../../db/operations/volumes/types.ts";
import type { Deps } from "../../deps.ts";
import { Conflict, DomainError, Forbidden, NotFound, QuotaExceeded } from "../../errors.ts";
import { storageCostOf, storageRate } from "../credits/storage.ts";
import type { Principal } from "../identity/principal.ts";
import { scopeOf } from "../identity/scope.ts";
import { effectiveLimit } from "../sessions/checkQuota.ts";
import { canManageVolume, canSeeVolume, ownsVolume, sharedWith } from "./access.ts";
import { capacityOf } from "./capacity.ts";
import { capacityContext, poolViews } from "./pools.ts";
import { namespacedSessionsPath, storageRuntimeOf, unreachable, volumePath } from "./runtime.ts";

export interface VolumeView {
  row: VolumeRow;
  /** The resource: shares, lock, bound cluster, claim, used. Absent only if it vanished underneath. */
  cr: Volume | undefined;
  /** Sessions (resource names) that mount it and are not terminated. */
  mounts?: { session: string; readOnly: boolean; mountPath: string | null }[];
  /** What it costs per hour at the storage rate (units, rounded up), running sessions or not. */
  hourlyCost?: bigint;
  /** Seen only through a share with the caller: how they may mount it. */
  sharedWithMe?: "read_only" | "read_write";
}

/** Adds each view's hourly cost at the fleet's storage rate (one read). */
export async function priced<T extends VolumeView | VolumeView[]>(deps: Deps, v: T): Promise<T> {
  const rate = await storageRate(deps.db);
  for (const x of Array.isArray(v) ? v : [v]) x.hourlyCost = storageCostOf(rate, x.row.size_gb, 3600);
  return v;
}

/**
 * The resource policy's quota for `addGb` more, inside the locking transaction. An owner's snapshots count
 * with their volumes (a snapshot holds its volume's size until it is deleted).
 */
export async function checkQuota(
  deps: Deps,
  tx: Knex.Transaction,
  row: Pick<VolumeRow, "organization_id" | "owner_kind" | "owner_id">,
  addGb: number,
) {
  const policies = await storageRuntimeOf(deps).policies();
  const project = row.owner_kind === "project";
  const limitName = project ? "maxVolumeGbPerProject" : "maxVolumeGbPerUser";
  const limit = effectiveLimit(policies, limitName, {
    organizationId: row.organization_id,
    projectId: project ? row.owner_id : null,
    ...(project ? {} : { userId: row.owner_id }),
  });
  if (limit) {
    const volumes = await provisionedByOwner(tx, row.owner_kind, row.owner_id);
    const snapshots = await snapshotGbByOwner(tx, row.owner_kind, row.owner_id);
    const current = volumes + snapshots;
    if (current + addGb > limit.value)
      throw new QuotaExceeded(
        `this would hold ${current + addGb} GB of volumes and snapshots; the limit is ${limit.value} GB (${limit.scope})`,
        {
          limit: project ? "max_volume_gb_per_project" : "max_volume_gb_per_user",
          value: limit.value,
          current_gb: current,
          snapshot_gb: snapshots,
          requested_gb: addGb,
          scope: limit.scope,
        },
      );
  }
}

/** Quota (resource policy) and room on the pool for `addGb` more, inside the locking transaction. */
export async function checkRoom(
  deps: Deps,
  tx: Knex.Transaction,
  row: Pick<VolumeRow, "organization_id" | "owner_kind" | "owner_id">,
  pool: Pool,
  addGb: number,
) {
  await checkQuota(deps, tx, row, addGb);
  const poolName = pool.metadata.name ?? "";
  const used = (await provisionedByPool(tx, deps.clock.now())).get(poolName)?.gb ?? 0;
  const cap = capacityOf(pool, used, (await capacityContext(deps, tx))(pool));
  if (cap && cap.availableGb < addGb) {
    const all = await poolViews(deps);
    const pools = all.map((v) => ({
      pool: v.pool.metadata.name,
      available_gb: v.capacity?.availableGb ?? null,
      source: v.capacity?.source ?? null,
    }));
    throw new DomainError(
      "pool_capacity_exceeded",
      `pool ${poolName} has ${cap.availableGb} GB free; ${addGb} GB do not fit (pools are not added together)`,
      {
        requested_gb: addGb,
        pool: poolName,
        pools,
        largest_available_gb: Math.max(0, ...pools.map((p) => p.available_gb ?? 0)),
      },
    );
  }
}

export function nameTaken(name: string) {
  return new Conflict(`you already have a volume named ${name}`, { name }, "already_exists");
}

export async function readVolumeCr(deps: Deps, row: VolumeRow): Promise<Volume | undefined> {
  const res = await storageRuntimeOf(deps)
    .kube.request("GET", volumePath(row.namespace, row.cr_name))
    .catch(unreachable("reading a volume"));
  if (res.status === 404) return undefined;
  if (res.status >= 300) throw new KubeError("GET", volumePath(row.namespace, row.cr_name), res.status, res.body);
  return VolumeKind.schema.parse(res.body);
}

/** Sessions of the volume's namespace that mount it and are not (being) terminated. */
export async function mountsOf(deps: Deps, row: VolumeRow): Promise<NonNullable<VolumeView["mounts"]>> {
  const list = await storageRuntimeOf(deps)
    .kube.json<{
      items: {
        metadata: { name: string };
        spec?: { desiredState?: string; volumes?: { volume: string; readOnly?: boolean; mountPath?: string }[] };
        status?: { phase?: string };
      }[];
    }>("GET", namespacedSessionsPath(row.namespace))
    .catch(unreachable("listing sessions"));
  return list.items.flatMap((s) => {
    if (s.spec?.desiredState === "Terminated" || s.status?.phase === "Terminated") return [];
    const m = s.spec?.volumes?.find((v) => v.volume === row.cr_name);
    return m ? [{ session: s.metadata.name, readOnly: m.readOnly ?? false, mountPath: m.mountPath ?? null }] : [];
  });
}

/** The volume as the caller may see it; 404 when it is not theirs to see (existence not revealed). */
export async function visible(
  deps: Deps,
  principal: Principal,
  id: string,
): Promise<{ row: VolumeRow; cr: Volume | undefined }> {
  const row = await findVolumeById(deps.db, id);
  if (!row) throw new NotFound("volume", id);
  const scope = scopeOf(principal);
  const cr = scope.organizations.has(row.organization_id) || scope.all ? await readVolumeCr(deps, row) : undefined;
  if (!canSeeVolume(scope, row, cr)) throw new NotFound("volume", id);
  return { row, cr };
}

export async function manageable(deps: Deps, principal: Principal, id: string) {
  const v = await visible(deps, principal, id);
  if (!canManageVolume(scopeOf(principal), v.row))
    throw new Forbidden("only the volume's owner or an administrator may change it");
  return v;
}

export function refuseLocked(cr: Volume | undefined, id: string) {
  if (cr?.spec.locked)
    throw new Conflict(`volume ${id} is locked`, { volume: id, reason: cr.spec.lockReason ?? null }, "volume_locked");
}

/** How the caller may mount a volume they see only through a share (nothing when they own it). */
export function sharedMark(s: ReturnType<typeof scopeOf>, row: VolumeRow, cr: Volume | undefined) {
  if (ownsVolume(s, row)) return {};
  const shares = sharedWith(s, cr);
  if (shares.length === 0) return {};
  return {
    sharedWithMe: shares.some((x) => x.access === "ReadWrite") ? ("read_write" as const) : ("read_only" as const),
  };
}

export async function patchCr(deps: Deps, row: VolumeRow, spec: Record<string, unknown>): Promise<Volume> {
  const res = await storageRuntimeOf(deps)
    .kube.request("PATCH", volumePath(row.namespace, row.cr_name), { body: { spec } })
    .catch(unreachable("updating a volume"));
  if (res.status >= 300) throw new KubeError("PATCH", volumePath(row.namespace, row.cr_name), res.status, res.body);
  return VolumeKind.schema.parse(res.body);
}
