import { sessionIdOf } from "@berth/crds";
import type { PoolView } from "../../domain/storage/pools.ts";
import type { VolumeView } from "../../domain/storage/volumeParts.ts";
import { isoTimestamp as iso } from "../../http/timestamp.ts";

export function presentPool(v: PoolView) {
  const s = v.pool.spec;
  return {
    name: v.pool.metadata.name ?? "",
    display_name: s.displayName ?? null,
    cluster: s.cluster,
    storage_class: s.storageClass,
    sharing: s.sharing,
    clusters: s.clusters ?? [],
    manual_capacity_gb: s.manualCapacityGb ?? null,
    default: s.default,
    capacity: v.capacity
      ? {
          source: v.capacity.source,
          total_gb: v.capacity.totalGb,
          available_gb: v.capacity.availableGb,
          provisioned_gb: v.capacity.provisionedGb,
          observed_at: v.capacity.observedAt,
          via: v.capacity.via,
          stale: v.capacity.stale,
        }
      : null,
    volumes: v.volumes,
    created_at: v.pool.metadata.creationTimestamp ?? null,
  };
}

export function presentVolume(v: VolumeView) {
  const { row, cr } = v;
  return {
    id: row.id,
    name: row.name,
    organization_id: row.organization_id,
    owner: { kind: row.owner_kind, id: row.owner_id },
    size_gb: row.size_gb,
    used_gb: cr?.status?.usedGb ?? null,
    pool: row.pool,
    bound_cluster: cr?.status?.boundCluster ?? null,
    claim_name: cr?.status?.claimName ?? null,
    locked: cr?.spec.locked ?? false,
    lock_reason: cr?.spec.lockReason ?? null,
    shared_with_me: v.sharedWithMe ?? null,
    shares: (cr?.spec.shares ?? []).map((s) => ({
      kind: s.kind,
      id: s.id,
      access: s.access === "ReadWrite" ? ("read_write" as const) : ("read_only" as const),
    })),
    ...(v.mounts
      ? {
          mounts: v.mounts.map((m) => ({
            session_id: sessionIdOf(m.session),
            read_only: m.readOnly,
            mount_path: m.mountPath,
          })),
        }
      : {}),
    hourly_cost: (v.hourlyCost ?? 0n).toString(),
    deleted_at: row.deleted_at ? iso(row.deleted_at) : null,
    purge_after: row.purge_after ? iso(row.purge_after) : null,
    restored_from: row.restored_from ?? null,
    restoring: !!row.restored_from && !row.restored_at,
    created_by: row.created_by,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}
