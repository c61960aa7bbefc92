// Volume snapshots, under the volume they were taken of (docs/dev/storage.md, "Snapshots"). The API
// records what is asked; the worker makes and deletes the VolumeSnapshot on the GPU cluster and records
// what its storage driver says, so states move creating → ready | failed, and deleting → gone.
import { Page, Paged } from "../../db/paging.ts";
import { createSnapshot } from "../../domain/snapshots/createSnapshot.ts";
import { deleteSnapshot } from "../../domain/snapshots/deleteSnapshot.ts";
import { listSnapshots } from "../../domain/snapshots/listSnapshots.ts";
import { restoreSnapshot } from "../../domain/snapshots/restoreSnapshot.ts";
import { visibleSnapshot } from "../../domain/snapshots/snapshotParts.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentVolume } from "../storage/presenter.ts";
import { StorageVolume } from "../storage/schemas.ts";
import { presentSnapshot } from "./presenter.ts";
import { CreateSnapshotBody, RestoreSnapshotBody, SnapshotParams, VolumeParams, VolumeSnapshot } from "./schemas.ts";

const TAGS = ["storage"];

export const createSnapshotRoute = defineRoute({
  method: "post",
  path: "/api/v1/storage/volumes/:volumeId/snapshots",
  operationId: "createVolumeSnapshot",
  tags: TAGS,
  summary: "Snapshot a volume",
  description: [
    "Answers the snapshot in state `creating`; the worker takes it on the cluster holding the volume's claim with the storage driver's CSI snapshot, and it becomes `ready` (or `failed`, with `failure`).",
    "Refusals: 409 `volume_mounted` while a session that is not paused mounts the volume read-write (details.sessions: pause them first); 403 `quota_exceeded` when the volume's size no longer fits the owner's quota (snapshots count with volumes); 409 `already_exists` for a second snapshot of that name on the volume. Only who manages the volume may snapshot it (403); others get 404.",
    "Send `Idempotency-Key`: a repeat answers the first result and takes nothing.",
  ].join("\n\n"),
  auth: "user",
  params: VolumeParams,
  body: CreateSnapshotBody,
  idempotent: true,
  audit: "storage.snapshot.create",
  errors: ["volume_mounted", "quota_exceeded", "already_exists", "not_found"],
  responses: { 202: VolumeSnapshot },
  handler: async ({ deps, principal, params, body, audit }) => {
    const s = await createSnapshot(deps, principal, params.volumeId, body);
    audit.target("snapshot", s.id);
    audit.organization(s.organization_id);
    return { status: 202, body: presentSnapshot(s) };
  },
});

export const listSnapshotsRoute = defineRoute({
  method: "get",
  path: "/api/v1/storage/volumes/:volumeId/snapshots",
  operationId: "listVolumeSnapshots",
  tags: TAGS,
  summary: "A volume's snapshots (newest first), for whoever sees the volume",
  auth: "user",
  params: VolumeParams,
  query: Page,
  errors: ["not_found"],
  responses: { 200: Paged(VolumeSnapshot) },
  handler: async ({ deps, principal, params, query }) => {
    const { rows, total } = await listSnapshots(deps, principal, params.volumeId, query);
    return {
      status: 200,
      body: { data: rows.map(presentSnapshot), pagination: { page: query.page, size: query.size, total } },
    };
  },
});

export const getSnapshotRoute = defineRoute({
  method: "get",
  path: "/api/v1/storage/volumes/:volumeId/snapshots/:snapshotId",
  operationId: "getVolumeSnapshot",
  tags: TAGS,
  summary: "A snapshot of a volume",
  auth: "user",
  params: SnapshotParams,
  errors: ["not_found"],
  responses: { 200: VolumeSnapshot },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentSnapshot((await visibleSnapshot(deps, principal, params.volumeId, params.snapshotId)).snapshot),
  }),
});

export const deleteSnapshotRoute = defineRoute({
  method: "delete",
  path: "/api/v1/storage/volumes/:volumeId/snapshots/:snapshotId",
  operationId: "deleteVolumeSnapshot",
  tags: TAGS,
  summary: "Delete a snapshot",
  description:
    "Answers it in state `deleting`; the worker deletes it on its cluster, and from then on it is neither billed nor counted in the quota. Refused with 409 `snapshot_restoring` while a volume is being made from it (details.volumes).",
  auth: "user",
  params: SnapshotParams,
  audit: "storage.snapshot.delete",
  errors: ["snapshot_restoring", "not_found"],
  responses: { 202: VolumeSnapshot },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("snapshot", params.snapshotId);
    return {
      status: 202,
      body: presentSnapshot(await deleteSnapshot(deps, principal, params.volumeId, params.snapshotId)),
    };
  },
});

export const restoreSnapshotRoute = defineRoute({
  method: "post",
  path: "/api/v1/storage/volumes/:volumeId/snapshots/:snapshotId/restore",
  operationId: "restoreVolumeSnapshot",
  tags: TAGS,
  summary: "Restore a snapshot into a new volume",
  description: [
    "Makes a new volume on the snapshot's pool (`restoring: true` until the worker's claim for it has bound with the snapshot's data). It is a volume like any other: your quota and the pool's room apply (403 `quota_exceeded`, 409 `pool_capacity_exceeded`), and its name must be free among your volumes (409 `already_exists`).",
    "Refused with 409 `snapshot_not_ready` unless the snapshot is `ready`.",
    "Send `Idempotency-Key`: a repeat answers the first result and creates nothing.",
  ].join("\n\n"),
  auth: "user",
  params: SnapshotParams,
  body: RestoreSnapshotBody,
  idempotent: true,
  audit: "storage.snapshot.restore",
  errors: ["snapshot_not_ready", "already_exists", "quota_exceeded", "pool_capacity_exceeded", "not_found"],
  responses: { 201: StorageVolume },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("snapshot", params.snapshotId);
    const v = await restoreSnapshot(deps, principal, params.volumeId, params.snapshotId, body);
    audit.organization(v.row.organization_id);
    return { status: 201, body: presentVolume(v) };
  },
});

export const routes: RouteDef[] = [
  createSnapshotRoute,
  listSnapshotsRoute,
  getSnapshotRoute,
  deleteSnapshotRoute,
  restoreSnapshotRoute,
];
