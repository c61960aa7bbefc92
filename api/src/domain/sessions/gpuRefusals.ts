// Whether the fleet can run an offering's GPUs at all: a card model some cluster has, and for a slice a
// cluster that runs a GPU sharing layer (createSession.ts and previewCost.ts refuse with these).
import { fractionLabel, type GpuSlice, type Offering, sliceOf } from "@berth/crds";
import { fleetModels } from "../../db/operations/sessions/fleetModels.ts";
import { sharingClusters } from "../../db/operations/sessions/sharingClusters.ts";
import type { Deps } from "../../deps.ts";
import { DomainError } from "../../errors.ts";

/** The slice a fractional offering guarantees, fixed on the session at creation; undefined for whole cards. */
export function sliceOfOffering(offering: Offering): GpuSlice | undefined {
  const n = offering.spec.slicesPerCard;
  if (n === undefined || offering.spec.gpuMemoryMib === undefined) return undefined;
  return sliceOf(offering.spec.gpuMemoryMib, n);
}

/**
 * 422 `gpu_sharing_unavailable` when the offering is a slice and no cluster with its model (or not the
 * pinned one) runs a GPU sharing layer: nothing could isolate the slice.
 */
export async function gpuSharingRefusal(
  deps: Deps,
  offering: string,
  gpuModel: string,
  slicesPerCard: number,
  clusterId?: string,
): Promise<DomainError | undefined> {
  const sharing = await sharingClusters(deps.db, gpuModel);
  if (clusterId ? sharing.includes(clusterId) : sharing.length > 0) return undefined;
  return new DomainError(
    "gpu_sharing_unavailable",
    clusterId
      ? `cluster ${clusterId} runs no GPU sharing layer for ${gpuModel}: a ${fractionLabel(slicesPerCard)} slice cannot go there`
      : `no cluster with ${gpuModel} runs a GPU sharing layer: a ${fractionLabel(slicesPerCard)} slice cannot be placed; pick a whole-card offering`,
    {
      gpu_model: gpuModel,
      offering,
      fraction: fractionLabel(slicesPerCard),
      sharing_clusters: sharing,
      supported_layers: ["hami"],
      ...(clusterId ? { cluster_id: clusterId } : {}),
    },
  );
}

/** 422 `gpu_model_unavailable` when no cluster of the fleet (or not the pinned one) has the model. */
export async function gpuModelRefusal(
  deps: Deps,
  offering: string,
  gpuModel: string,
  clusterId?: string,
): Promise<DomainError | undefined> {
  const models = await fleetModels(deps.db, clusterId);
  if (models.includes(gpuModel)) return undefined;
  const fleet = clusterId ? await fleetModels(deps.db) : models;
  return new DomainError(
    "gpu_model_unavailable",
    clusterId ? `cluster ${clusterId} has no ${gpuModel}` : `no cluster of the fleet has ${gpuModel}`,
    {
      gpu_model: gpuModel,
      offering,
      reported_models: clusterId ? models : fleet,
      ...(clusterId ? { cluster_id: clusterId, fleet_models: fleet } : {}),
    },
  );
}
