// Volumes (the person's, a session's, the deleted ones awaiting their grace), their shares, the storage
// settings and the storage pools.
import { type BodyOf, newIdempotencyKey } from "../api/client.ts";
import { api } from "./context.ts";

export function loadVolumes(signal?: AbortSignal) {
  return api.call("listVolumes", { query: { size: 100 } }, { signal });
}

export function loadDeletedVolumes(signal?: AbortSignal) {
  return api.call("listVolumes", { query: { size: 100, deleted: "true" } }, { signal });
}

export function loadSessionVolumes(sessionId: string, signal?: AbortSignal) {
  return api.call("listVolumes", { query: { session_id: sessionId, size: 100 } }, { signal });
}

export function createVolume(name: string, sizeGb: number) {
  return api.call("createVolume", { body: { name, size_gb: sizeGb } }, { idempotencyKey: newIdempotencyKey() });
}

export function updateVolume(volumeId: string, body: BodyOf<"updateVolume">) {
  return api.call("updateVolume", { params: { volumeId }, body });
}

export function setVolumeShares(volumeId: string, shares: BodyOf<"setVolumeShares">["shares"]) {
  return api.call("setVolumeShares", { params: { volumeId }, body: { shares } });
}

export function deleteVolume(volumeId: string) {
  return api.call("deleteVolume", { params: { volumeId } });
}

export function restoreVolume(volumeId: string) {
  return api.call("restoreVolume", { params: { volumeId } });
}

export function loadStorageSettings(signal?: AbortSignal) {
  return api.call("getStorageSettings", {}, { signal });
}

export function updateStorageSettings(body: BodyOf<"updateStorageSettings">) {
  return api.call("updateStorageSettings", { body });
}

export function loadStoragePools(signal?: AbortSignal) {
  return api.call("listStoragePools", { query: { size: 100 } }, { signal });
}

export function createStoragePool(body: BodyOf<"createStoragePool">) {
  return api.call("createStoragePool", { body });
}

export function makeDefaultStoragePool(pool: string) {
  return api.call("updateStoragePool", { params: { pool }, body: { default: true } });
}

export function deleteStoragePool(pool: string) {
  return api.call("deleteStoragePool", { params: { pool } });
}

export function loadVolumeSnapshots(volumeId: string, signal?: AbortSignal) {
  return api.call("listVolumeSnapshots", { params: { volumeId }, query: { size: 100 } }, { signal });
}

export function createVolumeSnapshot(volumeId: string, name: string) {
  return api.call(
    "createVolumeSnapshot",
    { params: { volumeId }, body: { name } },
    { idempotencyKey: newIdempotencyKey() },
  );
}

export function restoreVolumeSnapshot(volumeId: string, snapshotId: string, name: string) {
  return api.call(
    "restoreVolumeSnapshot",
    { params: { volumeId, snapshotId }, body: { name } },
    { idempotencyKey: newIdempotencyKey() },
  );
}

export function deleteVolumeSnapshot(volumeId: string, snapshotId: string) {
  return api.call("deleteVolumeSnapshot", { params: { volumeId, snapshotId } });
}
