// Snapshots, a leader-only loop of the worker: it turns snapshot rows into CSI VolumeSnapshots on the GPU
// cluster that holds the volume's claim, and records what the cluster's snapshot controller says
// (docs/dev/storage.md, "Snapshots"). States are never guessed: a row becomes `ready` only when the
// VolumeSnapshot says readyToUse, and `failed` when the cluster cannot take one or the snapshotter's error
// outlasts `failAfterMs` (it retries; an error is its last attempt's, not a verdict).
//
// Per pass, each snapshot being made: the cluster is chosen once (where the volume's claim is, else the
// pool's own cluster, which then gets the claim and records it on the Volume like a mount, so the idle
// release takes it later); the VolumeSnapshot is made from the claim, then read until it is ready or
// failed. Each being deleted: its VolumeSnapshot is deleted and the row ended once it is gone. Each
// volume made from a snapshot: its first claim is made from the VolumeSnapshot (dataSource) on the
// snapshot's cluster, and the volume is marked restored once that claim is bound.

import { DATA_PATH_ANNOTATION } from "@berth/controllers";
import type { KubeApi } from "@berth/controllers/kube";
import { PeriodicPass } from "@berth/controllers/kube";
import { LABELS, PoolKind, resourcePath, type Volume, VolumeKind, volumeClaimName, volumeDataPath } from "@berth/crds";
import type { Knex } from "knex";
import type { Logger } from "pino";
import type { Clock } from "../clock.ts";
import {
  findSnapshot,
  markRestored,
  pendingRestores,
  pendingSnapshots,
  updateSnapshot,
} from "../db/operations/snapshots/snapshots.ts";
import type { SnapshotRow } from "../db/operations/snapshots/types.ts";

export const SNAPSHOT_GROUP = "snapshot.storage.k8s.io";
const SNAPSHOT_API = `/apis/${SNAPSHOT_GROUP}/v1`;

export interface SnapshotLoopOptions {
  /** Default 5 s. */
  intervalMs?: number;
  /** The GPU clusters' sessions namespace, where the claims are. Default berth-sessions. */
  namespace?: string;
  /** Rows per pass; default 50. */
  batch?: number;
  /**
   * A VolumeSnapshot's error is the snapshotter's last attempt, which it retries (a volume still being
   * unmounted after a pause is refused for a moment); one still not ready this long after the request has
   * failed. Default 10 minutes.
   */
  failAfterMs?: number;
}

export interface SnapshotLoopDeps {
  db: Knex;
  /** The management cluster: Volume and Pool resources. */
  kube: KubeApi;
  clusterClient(clusterId: string): Promise<KubeApi>;
  log: Logger;
  clock?: Clock;
}

interface VolumeSnapshotView {
  metadata?: { deletionTimestamp?: string };
  status?: { readyToUse?: boolean; restoreSize?: string; error?: { message?: string } };
}

const UNITS: Record<string, bigint> = {
  "": 1n,
  k: 1000n,
  M: 1000n ** 2n,
  G: 1000n ** 3n,
  T: 1000n ** 4n,
  Ki: 1024n,
  Mi: 1024n ** 2n,
  Gi: 1024n ** 3n,
  Ti: 1024n ** 4n,
};

/** A whole-number Kubernetes quantity in bytes (restoreSize); undefined for anything else. */
export function quantityBytes(q: string | undefined): bigint | undefined {
  const m = q === undefined ? null : /^([0-9]+)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(q);
  return m ? BigInt(m[1] as string) * (UNITS[m[2] ?? ""] as bigint) : undefined;
}

export class SnapshotLoop {
  readonly #d: SnapshotLoopDeps;
  readonly #o: Required<SnapshotLoopOptions>;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #loop: PeriodicPass;

  constructor(d: SnapshotLoopDeps & SnapshotLoopOptions) {
    this.#d = d;
    this.#o = {
      intervalMs: d.intervalMs ?? 5_000,
      namespace: d.namespace ?? "berth-sessions",
      batch: d.batch ?? 50,
      failAfterMs: d.failAfterMs ?? 600_000,
    };
    this.#log = d.log.child({ component: "snapshots" });
    this.#clock = d.clock ?? { now: () => new Date() };
    this.#loop = new PeriodicPass({
      intervalMs: this.#o.intervalMs,
      pass: () => this.pass().then(() => undefined),
      onError: (err) => this.#log.warn({ err }, "snapshot pass failed; retried on the next pass"),
    });
  }

  start(): void {
    if (!this.#loop.running) this.#loop.start();
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }

  /** One pass over what is pending; answers how many rows it moved on. One row's trouble spares the rest. */
  async pass(): Promise<{ moved: number }> {
    let moved = 0;
    for (const s of await pendingSnapshots(this.#d.db, this.#o.batch)) {
      try {
        if (await (s.state === "deleting" ? this.#delete(s) : this.#make(s))) moved++;
      } catch (err) {
        this.#log.warn({ err, snapshot: s.id, volume: s.volume_id }, "snapshot not moved on; retried next pass");
      }
    }
    for (const v of await pendingRestores(this.#d.db, this.#o.batch)) {
      try {
        if (await this.#restore(v)) moved++;
      } catch (err) {
        this.#log.warn({ err, volume: v.id, snapshot: v.restored_from }, "restore not moved on; retried next pass");
      }
    }
    return { moved };
  }

  #snapshotPath(name?: string): string {
    return `${SNAPSHOT_API}/namespaces/${this.#o.namespace}/volumesnapshots${name ? `/${name}` : ""}`;
  }

  #claimPath(name?: string): string {
    return `/api/v1/namespaces/${this.#o.namespace}/persistentvolumeclaims${name ? `/${name}` : ""}`;
  }

  async #fail(s: SnapshotRow, why: string): Promise<true> {
    const now = this.#clock.now();
    await updateSnapshot(
      this.#d.db,
      s.id,
      { state: "failed", failure: why.slice(0, 2000), failed_at: now, updated_at: now },
      { whenState: ["creating"] },
    );
    this.#log.info({ snapshot: s.id, volume: s.volume_id, why }, "snapshot failed");
    return true;
  }

  async #volumeOf(
    id: string,
  ): Promise<{ row: { namespace: string; cr_name: string; pool: string; size_gb: number }; cr?: Volume }> {
    const row = (await this.#d.db("volumes").where({ id }).first()) as {
      namespace: string;
      cr_name: string;
      pool: string;
      size_gb: number;
    };
    const found = await this.#one(resourcePath(VolumeKind, { namespace: row.namespace }), row.cr_name);
    return found ? { row, cr: VolumeKind.schema.parse(found) } : { row };
  }

  /**
   * One object of a management collection by name, through a list: the worker's credential lists and
   * watches Volumes and Pools (its informers), and needs no `get` for this (api/src/rbac.ts).
   */
  async #one(collection: string, name: string): Promise<unknown> {
    const res = await this.#d.kube.request<{ items?: unknown[] }>("GET", collection, {
      query: { fieldSelector: `metadata.name=${name}` },
    });
    if (res.status >= 300) throw new Error(`listing ${collection} for ${name}: ${res.status}`);
    return res.body.items?.[0];
  }

  /** The cluster a snapshot of the volume is taken on: its claim's, else its pool's own cluster. */
  async #clusterFor(pool: string, cr: Volume | undefined): Promise<string | undefined> {
    if (cr?.status?.boundCluster) return cr.status.boundCluster;
    const found = (await this.#one(resourcePath(PoolKind), pool)) as { spec?: { cluster?: string } } | undefined;
    return found?.spec?.cluster;
  }

  /**
   * The volume's claim on `cluster`, made when missing and recorded on the Volume as bound there (as a
   * mount records it), so placement keeps its sessions there and the idle release deletes it later.
   */
  async #ensureClaim(
    kube: KubeApi,
    cluster: string,
    volumeId: string,
    vol: { row: { namespace: string; cr_name: string; size_gb: number }; cr?: Volume },
    dataSource?: { name: string },
  ): Promise<{ status?: { phase?: string } } | undefined> {
    const claim = volumeClaimName(volumeId);
    const got = await kube.request<{ status?: { phase?: string } }>("GET", this.#claimPath(claim));
    if (got.status === 200) return got.body;
    if (got.status !== 404) throw new Error(`reading claim ${claim} on ${cluster}: ${got.status}`);
    const bound = vol.cr?.status?.boundCluster;
    if (bound && bound !== cluster) throw new Error(`volume ${volumeId} is bound on ${bound}, not ${cluster}`);
    const rec = await this.#d.kube.request(
      "PATCH",
      resourcePath(VolumeKind, { namespace: vol.row.namespace, name: vol.row.cr_name, subresource: "status" }),
      {
        body: {
          status: {
            boundCluster: cluster,
            claimName: claim,
            lastUsedAt: this.#clock.now().toISOString(),
            releaseAfter: null,
          },
        },
      },
    );
    if (rec.status >= 300) throw new Error(`recording the claim of ${vol.row.cr_name} on ${cluster}: ${rec.status}`);
    const made = await kube.request("POST", this.#claimPath(), {
      body: {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: {
          name: claim,
          namespace: this.#o.namespace,
          labels: { [LABELS.partOf]: "berth", [LABELS.managedBy]: "berth-worker", [LABELS.volumeId]: volumeId },
          annotations: { [DATA_PATH_ANNOTATION]: volumeDataPath(volumeId) },
        },
        spec: {
          accessModes: ["ReadWriteMany"],
          storageClassName: vol.cr?.spec.storageClass,
          resources: { requests: { storage: `${vol.row.size_gb}Gi` } },
          ...(dataSource
            ? { dataSource: { apiGroup: SNAPSHOT_GROUP, kind: "VolumeSnapshot", name: dataSource.name } }
            : {}),
        },
      },
    });
    if (made.status >= 300 && made.status !== 409)
      throw new Error(
        `creating claim ${claim} on ${cluster}: ${made.status} ${JSON.stringify(made.body).slice(0, 300)}`,
      );
    return undefined;
  }

  async #make(s: SnapshotRow): Promise<boolean> {
    const vol = await this.#volumeOf(s.volume_id);
    if (!vol.cr) return this.#fail(s, "the volume's resource is gone");
    let cluster = s.cluster_id;
    if (!cluster) {
      cluster = (await this.#clusterFor(s.pool, vol.cr)) ?? null;
      if (!cluster) return this.#fail(s, `pool ${s.pool} names no cluster`);
      await updateSnapshot(this.#d.db, s.id, { cluster_id: cluster, updated_at: this.#clock.now() });
    }
    const kube = await this.#d.clusterClient(cluster);
    const got = await kube.request<VolumeSnapshotView>("GET", this.#snapshotPath(s.k8s_name));
    if (got.status === 404) {
      // Is the API there at all? Without the snapshot CRDs the cluster cannot take one: say so, once.
      const api = await kube.request("GET", SNAPSHOT_API);
      if (api.status === 404)
        return this.#fail(
          s,
          `cluster ${cluster} does not serve ${SNAPSHOT_GROUP}/v1 (install the CSI snapshot CRDs, the snapshot controller and the driver's snapshotter)`,
        );
      await this.#ensureClaim(kube, cluster, s.volume_id, vol);
      const made = await kube.request("POST", this.#snapshotPath(), {
        body: {
          apiVersion: `${SNAPSHOT_GROUP}/v1`,
          kind: "VolumeSnapshot",
          metadata: {
            name: s.k8s_name,
            namespace: this.#o.namespace,
            labels: { [LABELS.partOf]: "berth", [LABELS.snapshotId]: s.id, [LABELS.volumeId]: s.volume_id },
          },
          // No class named: the cluster's default VolumeSnapshotClass for the claim's driver is used.
          spec: { source: { persistentVolumeClaimName: volumeClaimName(s.volume_id) } },
        },
      });
      if (made.status === 403 || made.status === 422 || made.status === 400)
        return this.#fail(
          s,
          `cluster ${cluster} refused the VolumeSnapshot: ${made.status} ${JSON.stringify(made.body).slice(0, 500)}`,
        );
      if (made.status >= 300 && made.status !== 409)
        throw new Error(`creating VolumeSnapshot ${s.k8s_name} on ${cluster}: ${made.status}`);
      return made.status < 300;
    }
    if (got.status >= 300) throw new Error(`reading VolumeSnapshot ${s.k8s_name} on ${cluster}: ${got.status}`);
    const st = got.body.status;
    const now = this.#clock.now();
    if (st?.readyToUse !== true) {
      const why = st?.error?.message;
      if (!why) return false;
      if (now.getTime() - new Date(s.created_at).getTime() >= this.#o.failAfterMs) return this.#fail(s, why);
      // Still trying: the last error is shown on the snapshot meanwhile, and kept if it ends failed.
      if (s.failure !== why.slice(0, 2000))
        await updateSnapshot(
          this.#d.db,
          s.id,
          { failure: why.slice(0, 2000), updated_at: now },
          { whenState: ["creating"] },
        );
      return false;
    }
    const bytes = quantityBytes(st.restoreSize);
    const done = await updateSnapshot(
      this.#d.db,
      s.id,
      {
        state: "ready",
        failure: null,
        ready_at: now,
        updated_at: now,
        ...(bytes !== undefined ? { restore_size_bytes: bytes.toString() } : {}),
      },
      { whenState: ["creating"] },
    );
    if (done) this.#log.info({ snapshot: s.id, volume: s.volume_id, cluster }, "snapshot ready");
    return !!done;
  }

  async #delete(s: SnapshotRow): Promise<boolean> {
    if (s.cluster_id) {
      const kube = await this.#d.clusterClient(s.cluster_id);
      const del = await kube.request("DELETE", this.#snapshotPath(s.k8s_name));
      // 404: gone already, or the cluster never served the API (the snapshot failed before it was made).
      if (del.status >= 300 && del.status !== 404)
        throw new Error(`deleting VolumeSnapshot ${s.k8s_name} on ${s.cluster_id}: ${del.status}`);
      // The snapshot controller's finalizers keep it until the driver has removed the data.
      if (del.status !== 404 && (await kube.request("GET", this.#snapshotPath(s.k8s_name))).status !== 404)
        return false;
    }
    const now = this.#clock.now();
    await updateSnapshot(this.#d.db, s.id, { deleted_at: now, updated_at: now }, { whenState: ["deleting"] });
    this.#log.info({ snapshot: s.id, volume: s.volume_id }, "snapshot deleted");
    return true;
  }

  async #restore(v: { id: string; restored_from: string }): Promise<boolean> {
    const snap = await findSnapshot(this.#d.db, v.restored_from);
    if (!snap?.cluster_id) throw new Error(`snapshot ${v.restored_from} has no cluster`);
    const kube = await this.#d.clusterClient(snap.cluster_id);
    const vol = await this.#volumeOf(v.id);
    const claim = await this.#ensureClaim(kube, snap.cluster_id, v.id, vol, { name: snap.k8s_name });
    if (claim?.status?.phase !== "Bound") return false;
    await markRestored(this.#d.db, v.id, this.#clock.now());
    this.#log.info({ volume: v.id, snapshot: snap.id, cluster: snap.cluster_id }, "volume restored from snapshot");
    return true;
  }
}
