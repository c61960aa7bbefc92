// A cluster's report of what its storage driver publishes, turned into the capacity reading of the pools
// whose storage server sits in that cluster (capacity rule 1): the driver's figure (`csi`, from its
// CSIStorageCapacity objects, else its volume stats: `via` says which) when it publishes one for the
// pool's class, else the stated capacity (`manual`: the pool's, then the fleet
// default), else the storage node's system drive (`node_disk`), else none. The Pool status is written
// only when the reading changes (a tick with nothing new writes nothing), and every change of source is
// recorded in status.sourceChanges. The report's time is kept per cluster in Postgres (storage_reports):
// that is what tells a stale reading (capacity.ts).
import { type CapacitySource, LABELS, type Pool, resourcePath, VolumeKind, volumeIdOf } from "@berth/crds";
import type { StorageReport } from "@berth/crds/internal-plane";
import { recordStorageReport } from "../../db/operations/volumes/storageReports.ts";
import { volumeStewards } from "../../db/operations/volumes/volumeStewards.ts";
import type { Deps } from "../../deps.ts";
import { notify } from "../notifications/notify.ts";
import { readPools } from "./pools.ts";
import { poolPath, storageRuntimeOf, unreachable, volumePath } from "./runtime.ts";
import { storageSettings } from "./settings.ts";

type Reading = NonNullable<NonNullable<Pool["status"]>["capacity"]>;

export function readingFor(
  pool: Pool,
  report: StorageReport,
  observedAt: string,
  fleetDefaultGb: number | null = null,
): Reading | null {
  const c = report.classes.find((x) => x.storage_class === pool.spec.storageClass);
  if (c)
    return {
      source: "csi",
      totalGb: c.total_gb ?? c.available_gb,
      availableGb: c.available_gb,
      observedAt: c.measured_at ? new Date(c.measured_at).toISOString() : observedAt,
      via: c.via,
    };
  if (pool.spec.manualCapacityGb !== undefined)
    return { source: "manual", totalGb: pool.spec.manualCapacityGb, via: "pool" };
  if (fleetDefaultGb !== null) return { source: "manual", totalGb: fleetDefaultGb, via: "fleet_default" };
  const d = report.node_disk;
  if (d)
    return { source: "node_disk", totalGb: d.total_gb, availableGb: d.available_gb, observedAt, via: `node:${d.node}` };
  return null;
}

function same(a: Reading | null | undefined, b: Reading | null): boolean {
  if (!a || !b) return !a && !b;
  return (
    a.source === b.source &&
    a.totalGb === b.totalGb &&
    (a.availableGb ?? null) === (b.availableGb ?? null) &&
    (a.via ?? null) === (b.via ?? null)
  );
}

/** Applies one cluster's report; answers how many pools it concerned and how many it changed. */
export async function applyStorageReport(
  deps: Deps,
  clusterId: string,
  report: StorageReport,
): Promise<{ pools: number; changed: number }> {
  const observedAt = new Date(report.observed_at).toISOString();
  await recordStorageReport(deps.db, clusterId, new Date(observedAt), report.interval_ms ?? null);
  const pools = (await readPools(deps)).filter((p) => p.spec.cluster === clusterId);
  const fleetDefault = pools.length > 0 ? (await storageSettings(deps.db)).fleet_capacity_gb : null;
  let changed = 0;
  for (const pool of pools) {
    const next = readingFor(pool, report, observedAt, fleetDefault);
    const current = pool.status?.capacity;
    if (same(current, next)) continue;
    const from: CapacitySource | undefined = current?.source;
    const changes =
      from !== next?.source
        ? [
            ...(pool.status?.sourceChanges ?? []).slice(-19),
            { ...(from ? { from } : {}), ...(next ? { to: next.source } : {}), at: observedAt },
          ]
        : pool.status?.sourceChanges;
    const res = await storageRuntimeOf(deps)
      .kube.request("PATCH", `${poolPath(pool.metadata.name)}/status`, {
        body: { status: { capacity: next, ...(changes ? { sourceChanges: changes } : {}) } },
      })
      .catch(unreachable("writing a pool's capacity"));
    if (res.status >= 300 && res.status !== 404)
      throw new Error(`writing the capacity of pool ${pool.metadata.name}: ${res.status}`);
    changed++;
  }
  await applyVolumeUsage(deps, clusterId, report);
  return { pools: pools.length, changed };
}

/**
 * The space used on each measured claim of a volume bound to the reporting cluster goes into its Volume's `status.usedGb`, written only when it
 * changed (one list per report, no write on a quiet tick). A claim not measured leaves the figure as it
 * was last measured, or absent (unknown: the API answers `used_gb: null`).
 */
async function applyVolumeUsage(deps: Deps, clusterId: string, report: StorageReport): Promise<void> {
  const used = new Map<string, number>();
  for (const v of report.volumes ?? []) {
    const m = /^berth-(vol-[a-z0-9]{20})$/.exec(v.claim_name);
    if (m) used.set(volumeIdOf(m[1] as string), v.used_gb);
  }
  if (used.size === 0) return;
  const kube = storageRuntimeOf(deps).kube;
  const list = await kube
    .json<{ items: unknown[] }>("GET", resourcePath(VolumeKind), {
      query: { labelSelector: `${LABELS.volumeId} in (${[...used.keys()].join(",")})` },
    })
    .catch(unreachable("listing volumes"));
  for (const item of list.items) {
    const r = VolumeKind.schema.safeParse(item);
    if (!r.success) continue;
    const vol = r.data;
    const gb = used.get(volumeIdOf(vol.metadata.name ?? ""));
    // Only the cluster that holds the claim speaks for it (an operator cannot write another's volumes).
    if (gb === undefined || vol.status?.boundCluster !== clusterId || vol.status.usedGb === gb) continue;
    const res = await kube
      .request("PATCH", `${volumePath(vol.metadata.namespace ?? "", vol.metadata.name ?? "")}/status`, {
        body: { status: { usedGb: gb } },
      })
      .catch(unreachable("writing a volume's use"));
    if (res.status >= 300 && res.status !== 404)
      throw new Error(`writing the use of volume ${vol.metadata.name}: ${res.status}`);
    if (res.status < 300 && crossesNearQuota(vol.status?.usedGb, gb, vol.spec.sizeGb)) {
      // A user's volume rings its owner; a project's rings whoever looks after the project's volumes.
      const owner = vol.spec.owner;
      const recipients =
        owner.kind === "user"
          ? [owner.id]
          : await volumeStewards(deps.db, { organizationId: vol.spec.organization, projectId: owner.id });
      const name = vol.spec.displayName ?? vol.metadata.name;
      await notify(
        deps.db,
        recipients.map((userId) => ({
          userId,
          organizationId: vol.spec.organization,
          kind: "volume.near_quota" as const,
          title: `Volume ${name} is ${Math.round((100 * gb) / vol.spec.sizeGb)} % full`,
          body: `${gb} of ${vol.spec.sizeGb} GB used${owner.kind === "project" ? " (a project's volume you administer)" : ""}. Grow it on the Volumes page before it fills up.`,
          data: {
            volume_id: volumeIdOf(vol.metadata.name ?? ""),
            used_gb: gb,
            size_gb: vol.spec.sizeGb,
            owner_kind: owner.kind,
            owner_id: owner.id,
          },
          // One per streak: while it is unread, a volume that stays full does not ring again.
          dedupeKey: `volume.near_quota:${vol.metadata.name}`,
          at: deps.clock.now(),
        })),
      );
    }
  }
}

/** Share of a volume's size at which its owner hears it is nearly full. */
export const NEAR_QUOTA_SHARE = 0.9;

/** Whether a new measurement crosses the near-full line upwards (unknown before counts as below it). */
export function crossesNearQuota(before: number | undefined, now: number, sizeGb: number): boolean {
  const line = NEAR_QUOTA_SHARE * sizeGb;
  return now >= line && (before === undefined || before < line);
}
