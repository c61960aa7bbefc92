import { z } from "zod";
// Storage pools (super_admin) and volumes. Pools are the Pool resources of the management cluster;
// volumes outlive sessions and follow their owner to whichever cluster a session lands on
// (docs/dev/storage.md).

import { Page, Paged, pageOf } from "../../db/paging.ts";
import { createVolume } from "../../domain/storage/createVolume.ts";
import { deleteVolume } from "../../domain/storage/deleteVolume.ts";
import { getVolume } from "../../domain/storage/getVolume.ts";
import { listVolumeViews } from "../../domain/storage/listVolumes.ts";
import { lockVolume } from "../../domain/storage/lockVolume.ts";
import { createPool, deletePool, getPool, listPools, updatePool } from "../../domain/storage/pools.ts";
import { restoreVolume } from "../../domain/storage/restoreVolume.ts";
import { storageSettings, updateStorageSettings } from "../../domain/storage/settings.ts";
import { setVolumeShares } from "../../domain/storage/shareVolume.ts";
import { updateVolumeOf } from "../../domain/storage/updateVolume.ts";
import { volumesOfSession } from "../../domain/storage/volumesOfSession.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentPool, presentVolume } from "./presenter.ts";
import {
  CreatePoolBody,
  CreateVolumeBody,
  ListVolumesQuery,
  LockVolumeBody,
  PoolParams,
  SetSharesBody,
  StoragePool,
  StorageSettingsBody,
  StorageSettingsView,
  StorageVolume,
  UpdatePoolBody,
  UpdateVolumeBody,
  VolumeParams,
} from "./schemas.ts";

const TAGS = ["storage"];

export const createPoolRoute = defineRoute({
  method: "post",
  path: "/api/v1/storage/pools",
  operationId: "createStoragePool",
  tags: TAGS,
  summary: "Create a storage pool (super_admin)",
  description:
    "Writes the Pool resource. The cluster (and with `selected` sharing, each listed cluster) must be registered: otherwise 400 `validation_failed` naming the field. A pool of the same name: 409 `already_exists`. Its capacity reads from the storage driver's report when the operators publish one, else `manual_capacity_gb`.",
  auth: "user",
  body: CreatePoolBody,
  audit: "storage.pool.create",
  errors: ["already_exists"],
  responses: { 201: StoragePool },
  handler: async ({ deps, principal, body, audit }) => {
    audit.target("pool", body.name);
    return { status: 201, body: presentPool(await createPool(deps, principal, body)) };
  },
});

export const listPoolsRoute = defineRoute({
  method: "get",
  path: "/api/v1/storage/pools",
  operationId: "listStoragePools",
  tags: TAGS,
  summary: "List storage pools with their capacity readings (super_admin)",
  auth: "user",
  query: Page,
  responses: { 200: Paged(StoragePool) },
  handler: async ({ deps, principal, query }) => ({
    status: 200,
    body: pageOf(await listPools(deps, principal), query, presentPool),
  }),
});

export const getPoolRoute = defineRoute({
  method: "get",
  path: "/api/v1/storage/pools/:pool",
  operationId: "getStoragePool",
  tags: TAGS,
  summary: "A storage pool (super_admin)",
  auth: "user",
  params: PoolParams,
  responses: { 200: StoragePool },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentPool(await getPool(deps, principal, params.pool)),
  }),
});

export const updatePoolRoute = defineRoute({
  method: "patch",
  path: "/api/v1/storage/pools/:pool",
  operationId: "updateStoragePool",
  tags: TAGS,
  summary: "Change a storage pool (super_admin)",
  description:
    "Sharing, clusters, stated capacity, name, default. The cluster and storage class change only while the pool holds no volume (409 `pool_in_use`).",
  auth: "user",
  params: PoolParams,
  body: UpdatePoolBody,
  audit: "storage.pool.update",
  errors: ["pool_in_use"],
  responses: { 200: StoragePool },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("pool", params.pool);
    return { status: 200, body: presentPool(await updatePool(deps, principal, params.pool, body)) };
  },
});

export const deletePoolRoute = defineRoute({
  method: "delete",
  path: "/api/v1/storage/pools/:pool",
  operationId: "deleteStoragePool",
  tags: TAGS,
  summary: "Delete a storage pool (super_admin)",
  description: "Refused with 409 `pool_in_use` while volumes live on it (details.volumes counts them).",
  auth: "user",
  params: PoolParams,
  audit: "storage.pool.delete",
  errors: ["pool_in_use"],
  responses: { 204: z.null() },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("pool", params.pool);
    await deletePool(deps, principal, params.pool);
    return { status: 204, body: null };
  },
});

export const createVolumeRoute = defineRoute({
  method: "post",
  path: "/api/v1/storage/volumes",
  operationId: "createVolume",
  tags: TAGS,
  summary: "Create a volume",
  description: [
    "Owned by you, or by `project_id` (a project of yours). On `pool`, or the default pool. Its data outlives sessions; a session that mounts it gets a claim on the cluster it lands on.",
    "Refusals: 403 `quota_exceeded` (the resource policy's `max_volume_gb_per_user`, or `max_volume_gb_per_project` for a project's volumes; details: `limit`, `value`, `current_gb`, `requested_gb`, `scope`); 409 `pool_capacity_exceeded` when the pool has no room (details.pools: each pool's free space; pools are never added together); 409 `already_exists` for a second volume of the same name and owner; 400 `validation_failed` for sizes that are not whole positive gigabytes and unknown pools.",
    "Send `Idempotency-Key`: a repeat answers the first result and creates nothing.",
  ].join("\n\n"),
  auth: "user",
  body: CreateVolumeBody,
  idempotent: true,
  audit: "storage.volume.create",
  errors: ["already_exists", "quota_exceeded", "pool_capacity_exceeded", "not_found"],
  responses: { 201: StorageVolume },
  handler: async ({ deps, principal, body, audit }) => {
    const v = await createVolume(deps, principal, body);
    audit.target("volume", v.row.id);
    audit.organization(v.row.organization_id);
    return { status: 201, body: presentVolume(v) };
  },
});

export const listVolumesRoute = defineRoute({
  method: "get",
  path: "/api/v1/storage/volumes",
  operationId: "listVolumes",
  tags: TAGS,
  summary: "List volumes (newest first)",
  description:
    "Yours, your projects', and for organization admins their organizations' (super_admins: all). Without mounts (see the detail). With `session_id`: the volumes that session mounts, each with its mount (404 for a session you cannot see). With `deleted=true`: deleted volumes you may still restore.",
  auth: "user",
  query: ListVolumesQuery,
  errors: ["not_found"],
  responses: { 200: Paged(StorageVolume) },
  handler: async ({ deps, principal, query }) => {
    if (query.session_id) {
      const mounted = await volumesOfSession(deps, principal, query.session_id);
      return {
        status: 200,
        body: { data: mounted.map(presentVolume), pagination: { page: 1, size: query.size, total: mounted.length } },
      };
    }
    const { views, total } = await listVolumeViews(deps, principal, query);
    return {
      status: 200,
      body: { data: views.map(presentVolume), pagination: { page: query.page, size: query.size, total } },
    };
  },
});

export const getVolumeRoute = defineRoute({
  method: "get",
  path: "/api/v1/storage/volumes/:volumeId",
  operationId: "getVolume",
  tags: TAGS,
  summary: "A volume: bound cluster, claim, size, use, mounts, shares, lock",
  auth: "user",
  params: VolumeParams,
  responses: { 200: StorageVolume },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentVolume(await getVolume(deps, principal, params.volumeId)),
  }),
});

export const updateVolumeRoute = defineRoute({
  method: "patch",
  path: "/api/v1/storage/volumes/:volumeId",
  operationId: "updateVolume",
  tags: TAGS,
  summary: "Rename a volume or make it larger",
  description:
    "`size_gb` only grows (smaller: 400 `validation_failed`), checked against quota and the pool's room like a creation; a locked volume is not resized (409 `volume_locked`).",
  auth: "user",
  params: VolumeParams,
  body: UpdateVolumeBody,
  audit: "storage.volume.update",
  errors: ["already_exists", "volume_locked", "quota_exceeded", "pool_capacity_exceeded"],
  responses: { 200: StorageVolume },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("volume", params.volumeId);
    return { status: 200, body: presentVolume(await updateVolumeOf(deps, principal, params.volumeId, body)) };
  },
});

export const deleteVolumeRoute = defineRoute({
  method: "delete",
  path: "/api/v1/storage/volumes/:volumeId",
  operationId: "deleteVolume",
  tags: TAGS,
  summary: "Delete a volume (undoable until its data goes)",
  description:
    "Its claim is released at once; its data is kept until `purge_after` (the storage settings' grace period, default 24 hours), until which `POST .../restore` undoes the delete. It is billed up to the delete. Refused while a session that is not terminated mounts it (409 `volume_in_use`, details.sessions) and while it is locked (409 `volume_locked`).",
  auth: "user",
  params: VolumeParams,
  audit: "storage.volume.delete",
  errors: ["volume_in_use", "volume_locked"],
  responses: { 200: StorageVolume },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("volume", params.volumeId);
    return { status: 200, body: presentVolume(await deleteVolume(deps, principal, params.volumeId)) };
  },
});

export const restoreVolumeRoute = defineRoute({
  method: "post",
  path: "/api/v1/storage/volumes/:volumeId/restore",
  operationId: "restoreVolume",
  tags: TAGS,
  summary: "Undo a volume's delete within its grace period",
  description:
    "The volume is back as it was, shares and lock included. Refused with 409 `volume_purged` once `purge_after` has passed, 409 `already_exists` when another volume of yours took its name meanwhile, 403 `quota_exceeded` when it no longer fits your quota.",
  auth: "user",
  params: VolumeParams,
  audit: "storage.volume.restore",
  responses: { 200: StorageVolume },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("volume", params.volumeId);
    return { status: 200, body: presentVolume(await restoreVolume(deps, principal, params.volumeId)) };
  },
});

export const getStorageSettingsRoute = defineRoute({
  method: "get",
  path: "/api/v1/storage/settings",
  operationId: "getStorageSettings",
  tags: TAGS,
  summary: "Storage's fleet-wide settings: rate per GB-hour, fleet-default capacity, delete grace period",
  auth: "user",
  responses: { 200: StorageSettingsView },
  handler: async ({ deps }) => ({ status: 200, body: await storageSettings(deps.db) }),
});

export const updateStorageSettingsRoute = defineRoute({
  method: "put",
  path: "/api/v1/storage/settings",
  operationId: "updateStorageSettings",
  tags: TAGS,
  summary: "Change storage's fleet-wide settings (super_admin)",
  description:
    "Any subset. `gb_hour_credit_rate` prices storage from the next charged span on; `fleet_capacity_gb` is the capacity of pools that state none and whose driver publishes none (reported as `manual`, via `fleet_default`); `delete_grace_hours` applies to volumes deleted from now on.",
  auth: "user",
  body: StorageSettingsBody,
  audit: "storage.settings.update",
  responses: { 200: StorageSettingsView },
  handler: async ({ deps, principal, body, audit }) => {
    audit.target("settings", "storage");
    const { after } = await updateStorageSettings(deps, principal, body);
    return { status: 200, body: after };
  },
});

export const lockVolumeRoute = defineRoute({
  method: "post",
  path: "/api/v1/storage/volumes/:volumeId/lock",
  operationId: "lockVolume",
  tags: TAGS,
  summary: "Lock a volume (organization admin, super_admin)",
  description: "A locked volume cannot be mounted, resized or deleted; its owner sees the reason.",
  auth: "user",
  params: VolumeParams,
  body: LockVolumeBody,
  audit: "storage.volume.lock",
  responses: { 200: StorageVolume },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("volume", params.volumeId);
    return {
      status: 200,
      body: presentVolume(await lockVolume(deps, principal, params.volumeId, { locked: true, reason: body.reason })),
    };
  },
});

export const unlockVolumeRoute = defineRoute({
  method: "post",
  path: "/api/v1/storage/volumes/:volumeId/unlock",
  operationId: "unlockVolume",
  tags: TAGS,
  summary: "Unlock a volume (organization admin, super_admin)",
  auth: "user",
  params: VolumeParams,
  audit: "storage.volume.unlock",
  responses: { 200: StorageVolume },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("volume", params.volumeId);
    return { status: 200, body: presentVolume(await lockVolume(deps, principal, params.volumeId, { locked: false })) };
  },
});

export const setVolumeSharesRoute = defineRoute({
  method: "put",
  path: "/api/v1/storage/volumes/:volumeId/shares",
  operationId: "setVolumeShares",
  tags: TAGS,
  summary: "Share a volume with users or projects of its organization (replaces the list)",
  description:
    "`read_only` shares mount read-only; `read_write` ones as the owner's. A user without a membership in the volume's organization, or a project of another one: 400 `validation_failed` naming the entry.",
  auth: "user",
  params: VolumeParams,
  body: SetSharesBody,
  audit: "storage.volume.share",
  errors: ["volume_locked"],
  responses: { 200: StorageVolume },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("volume", params.volumeId);
    return { status: 200, body: presentVolume(await setVolumeShares(deps, principal, params.volumeId, body.shares)) };
  },
});

export const routes: RouteDef[] = [
  createPoolRoute,
  listPoolsRoute,
  getPoolRoute,
  updatePoolRoute,
  deletePoolRoute,
  createVolumeRoute,
  listVolumesRoute,
  getVolumeRoute,
  updateVolumeRoute,
  deleteVolumeRoute,
  restoreVolumeRoute,
  getStorageSettingsRoute,
  updateStorageSettingsRoute,
  lockVolumeRoute,
  unlockVolumeRoute,
  setVolumeSharesRoute,
];
