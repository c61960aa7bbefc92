// MIG instances as sessions see them (docs/dev/gpu-sharing.md): what a MIG offering fixes on a session,
// where its profile is offered, and how many instances are free per cluster.
import { type CardShare, migProfileOf, migShare, type Offering } from "@berth/crds";
import type { Knex } from "knex";
import { migLayoutRefs, offeredMig } from "../../db/operations/mig/migLayouts.ts";
import type { Deps } from "../../deps.ts";
import { DomainError } from "../../errors.ts";

/** The profile and its share of a card, for a MIG offering; undefined otherwise. */
export function migOfOffering(offering: Offering): { profile: string; share: CardShare } | undefined {
  const name = offering.spec.migProfile;
  if (name === undefined) return undefined;
  const profile = migProfileOf(offering.spec.gpuModel, name);
  // The catalog refuses a profile not of the model; an offering edited around it is priced as a whole card.
  return { profile: name, share: profile ? migShare(profile) : { num: 1, den: 1 } };
}

/** Per cluster, model and profile: instances offered (marked nodes that advertise them) and held by pods. */
export async function migRoom(
  db: Knex,
): Promise<{ clusterId: string; gpuModel: string; profile: string; allocatable: number; inUse: number }[]> {
  const [layouts, nodes] = await Promise.all([
    migLayoutRefs(db),
    db("cluster_nodes as n")
      .join("clusters as c", "c.id", "n.cluster_id")
      .whereNull("c.deregistered_at")
      .whereNotNull("n.mig")
      .where({ "n.ready": true, "n.schedulable": true })
      .select("n.cluster_id", "n.gpu_model", "n.labels", "n.mig") as Promise<
      {
        cluster_id: string;
        gpu_model: string | null;
        labels: Record<string, string>;
        mig: Record<string, { allocatable: number; in_use: number }> | null;
      }[]
    >,
  ]);
  const room = new Map<
    string,
    { clusterId: string; gpuModel: string; profile: string; allocatable: number; inUse: number }
  >();
  if (layouts.length === 0) return [];
  for (const n of nodes) {
    const mig = offeredMig(layouts, n);
    if (!mig || !n.gpu_model) continue;
    for (const [profile, q] of Object.entries(mig)) {
      const k = `${n.cluster_id}/${n.gpu_model}/${profile}`;
      const r = room.get(k) ?? { clusterId: n.cluster_id, gpuModel: n.gpu_model, profile, allocatable: 0, inUse: 0 };
      r.allocatable += q.allocatable;
      r.inUse += q.inUse;
      room.set(k, r);
    }
  }
  return [...room.values()];
}

/** MIG instances Berth's sessions hold per cluster, model and profile (a fresh placement before the inventory). */
export async function migHoldings(
  db: Knex,
): Promise<{ cluster_id: string; gpu_model: string; gpu_mig_profile: string; n: number }[]> {
  return (await db("sessions")
    .whereIn("phase", ["Starting", "Resuming", "Running", "Restarting", "Pausing", "Terminating", "Unknown"])
    .whereNotNull("cluster_id")
    .whereNotNull("gpu_mig_profile")
    .groupBy("cluster_id", "gpu_model", "gpu_mig_profile")
    .select("cluster_id", "gpu_model", "gpu_mig_profile", db.raw("count(*)::int as n"))) as never;
}

/**
 * 422 `mig_profile_unavailable` when no node of the model (on the pinned cluster, when pinned) is marked with
 * a layout of the profile and advertises it.
 */
export async function migRefusal(
  deps: Deps,
  offering: string,
  gpuModel: string,
  profile: string,
  clusterId?: string,
): Promise<DomainError | undefined> {
  const clusters = [
    ...new Set(
      (await migRoom(deps.db))
        .filter((r) => r.gpuModel === gpuModel && r.profile === profile && r.allocatable > 0)
        .map((r) => r.clusterId),
    ),
  ].sort();
  if (clusterId ? clusters.includes(clusterId) : clusters.length > 0) return undefined;
  return new DomainError(
    "mig_profile_unavailable",
    clusterId
      ? `no ${gpuModel} node of cluster ${clusterId} is partitioned with MIG profile ${profile}`
      : `no ${gpuModel} node of the fleet is partitioned with MIG profile ${profile}; pick another offering`,
    {
      gpu_model: gpuModel,
      offering,
      mig_profile: profile,
      mig_clusters: clusters,
      ...(clusterId ? { cluster_id: clusterId } : {}),
    },
  );
}
