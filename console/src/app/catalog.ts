// The catalogue a super_admin keeps: offerings, resource presets, catalogue images and resource policies,
// and which clusters take image builds.
import { type BodyOf, newIdempotencyKey } from "../api/client.ts";
import { api } from "./context.ts";

const FIRST_PAGE = { query: { size: 100 } };

export function loadOfferings(signal?: AbortSignal) {
  return api.call("listOfferings", FIRST_PAGE, { signal });
}

export function loadResourcePresets(signal?: AbortSignal) {
  return api.call("listResourcePresets", FIRST_PAGE, { signal });
}

export function loadResourcePolicies(signal?: AbortSignal) {
  return api.call("listResourcePolicies", FIRST_PAGE, { signal });
}

export function loadBuildClusters(signal?: AbortSignal) {
  return api.call("listBuildClusters", {}, { signal });
}

export type CatalogKind = "offerings" | "presets" | "images" | "policies";

/** Creates (name null) or updates the named entry of a kind; `body` was built and checked by its form. */
export async function saveCatalogEntry(kind: CatalogKind, name: string | null, body: never): Promise<void> {
  const key = { idempotencyKey: newIdempotencyKey() };
  const params = { params: { name: name ?? "" } };
  const creating = name === null;
  if (kind === "offerings")
    creating ? await api.call("createOffering", { body }, key) : await api.call("updateOffering", { ...params, body });
  else if (kind === "presets")
    creating
      ? await api.call("createResourcePreset", { body }, key)
      : await api.call("updateResourcePreset", { ...params, body });
  else if (kind === "images")
    creating ? await api.call("createImage", { body }, key) : await api.call("updateImage", { ...params, body });
  else if (kind === "policies")
    creating
      ? await api.call("createResourcePolicy", { body }, key)
      : await api.call("updateResourcePolicy", { ...params, body });
}

export function setOfferingEnabled(name: string, enabled: boolean) {
  return api.call("updateOffering", { params: { name }, body: { enabled } });
}

export function updateResourcePolicy(name: string, body: BodyOf<"updateResourcePolicy">) {
  return api.call("updateResourcePolicy", { params: { name }, body });
}

export function setBuildCluster(clusterId: string, builds: boolean) {
  return builds
    ? api.call("markBuildCluster", { params: { clusterId }, body: {} })
    : api.call("unmarkBuildCluster", { params: { clusterId } });
}
