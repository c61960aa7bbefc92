// Images: the catalogue's, the private ones imported or built, and their builds.
import { type BodyOf, newIdempotencyKey } from "../api/client.ts";
import { api } from "./context.ts";

export function loadImages(signal?: AbortSignal) {
  return api.call("listImages", { query: { size: 100 } }, { signal });
}

/** Berth's public signing key; refused with 404 when the installation has none. */
export function loadImageSigningKey(signal?: AbortSignal) {
  return api.call("getImageSigningKey", {}, { signal });
}

export function loadPrivateImages(signal?: AbortSignal) {
  return api.call("listPrivateImages", {}, { signal });
}

export function loadImageBuilds(signal?: AbortSignal) {
  return api.call("listImageBuilds", {}, { signal });
}

export function importImage(body: BodyOf<"importImage">) {
  return api.call("importImage", { body }, { idempotencyKey: newIdempotencyKey() });
}

export function createImageBuild(body: BodyOf<"createImageBuild">) {
  return api.call("createImageBuild", { body }, { idempotencyKey: newIdempotencyKey() });
}

export function cancelImageBuild(id: string) {
  return api.call("cancelImageBuild", { params: { id } });
}

export function deletePrivateImage(id: string) {
  return api.call("deletePrivateImage", { params: { id } });
}

/** A build's log as server-sent events, resuming after `lastEventId` when given. */
export function followImageBuildLog(id: string, lastEventId: string | undefined, signal: AbortSignal) {
  return api.fetchRaw(`/api/v1/image-builds/${id}/logs`, {
    signal,
    headers: lastEventId ? { "Last-Event-ID": lastEventId } : {},
  });
}
