// The volume claims of sessions' volumes on GPU clusters (docs/dev/storage.md), apart from the mirrors
// that mount them (dispatch.ts):
//   - while a mirror is written, its volumes are recorded as bound where it lands, and no release of
//     them begins (mount);
//   - the periodic pass (run) records when each idle claim will go, releases those due and purges deleted
//     volumes past their grace (claims.ts decides which).
// A claim being released is not mounted: the mirror waits (RetryAfter) until it is gone, then the operator
// makes it again where the session lands.
import {
  resourcePath,
  type Session,
  type Volume,
  VolumeKind,
  volumeClaimName,
  volumeDataPath,
  volumeIdOf,
} from "@berth/crds";
import type { KubeApi } from "../kube/client.ts";
import { holdsVolumes, idleClaims, purgeDue } from "./claims.ts";
import type { GpuClusterClients } from "./cluster-clients.ts";
import type { Observed } from "./observed.ts";
import type { WriteCounts } from "./options.ts";
import { RetryAfter } from "./retry-after.ts";

export interface ClaimsPassDeps {
  /** The management cluster: Volume status (where a volume's claim is) is written there. */
  management?: KubeApi;
  observed: Observed;
  clients: GpuClusterClients;
  counts: WriteCounts;
  /** Mirrors' (and so claims') namespace on GPU clusters. */
  namespace: string;
  /** How long a claim no session uses is kept (recorded on the volume, so the API can say when it goes). */
  claimIdleMs: number;
  now(): Date;
  /** Run a placement pass (a released claim frees its volume's next sessions to go anywhere). */
  schedulePlacement(): void;
}

export class ClaimsPass {
  readonly #d: ClaimsPassDeps;
  /** Volumes (namespace/name) whose claim is being released: no mirror mounts them until it is done. */
  readonly #releasing = new Set<string>();
  /** Released here, until the volumes' informer shows it (a mirror written before would see the old claim). */
  readonly #released = new Set<string>();
  /** Volumes (namespace/name) a mirror that mounts them is being written for: no release begins. */
  readonly #mounting = new Map<string, number>();
  /** When each claim was last seen used (claims.ts idleClaims). */
  readonly #lastUsed = new Map<string, number>();

  constructor(d: ClaimsPassDeps) {
    this.#d = d;
  }

  /**
   * Writes a mirror that mounts the session's volumes (`write`), their claims recorded on `clusterId`
   * first. Throws RetryAfter while a claim of them is being released.
   */
  async mount<T>(s: Session, clusterId: string, write: () => Promise<T>): Promise<T> {
    const keys = s.spec.volumes.map((v) => `${s.metadata.namespace}/${v.volume}`);
    for (const key of keys) {
      const vol = this.#d.observed.volumes.store.get(key);
      if (this.#released.has(key) && !vol?.status?.boundCluster) this.#released.delete(key);
      if (this.#releasing.has(key) || this.#released.has(key) || vol?.status?.releasingSince) {
        this.#d.counts.releaseWaits++;
        throw new RetryAfter(1_000, `the claim of volume ${key} on ${vol?.status?.boundCluster} is being released`);
      }
    }
    for (const key of keys) this.#mounting.set(key, (this.#mounting.get(key) ?? 0) + 1);
    try {
      await this.#bindVolumes(s, clusterId);
      return await write();
    } finally {
      for (const key of keys) {
        const n = (this.#mounting.get(key) ?? 1) - 1;
        if (n > 0) this.#mounting.set(key, n);
        else this.#mounting.delete(key);
      }
    }
  }

  /** Idle claims: records when each will go, releases those due, purges deleted volumes past their grace. */
  async run(): Promise<void> {
    const o = this.#d.observed;
    const now = this.#d.now().getTime();
    const marks = new Map<string, string | null>();
    const idle = idleClaims(
      o.volumes.store.entries(),
      [...o.sessionsNow()].map(([, s]) => s),
      this.#lastUsed,
      now,
      this.#d.claimIdleMs,
      marks,
    );
    for (const [key, at] of marks) {
      const vol = o.volumes.store.get(key);
      if (vol) await this.markReleaseAfter(vol, at);
    }
    // Looked at again after the release is marked: a session that came meanwhile keeps the claim.
    const stillIdle = (key: string) =>
      ![...o.sessionsNow()].some(
        ([, s]) => holdsVolumes(s) && s.spec.volumes.some((v) => `${s.metadata.namespace}/${v.volume}` === key),
      );
    for (const key of idle) {
      const vol = o.volumes.store.get(key);
      if (vol) await this.releaseClaim(vol, () => stillIdle(key));
      this.#lastUsed.delete(key);
    }
    if (idle.length > 0) this.#d.schedulePlacement();
    for (const key of purgeDue(o.volumes.store.entries(), now)) {
      const vol = o.volumes.store.get(key);
      const clusters = [...o.clusterRecords.values()].filter((c) => c.registered).map((c) => c.id);
      if (vol) await this.purgeVolume(vol, clusters);
    }
  }

  /**
   * Records on each of the session's volumes that its claim is on `clusterId` (before the mirror is
   * written, so placement keeps the volume's next sessions there from now on). A volume recorded on
   * another cluster is left alone: placement did not put the session there (a claim released since).
   */
  async #bindVolumes(s: Session, clusterId: string): Promise<void> {
    const kube = this.#d.management;
    if (!kube) return;
    const now = new Date().toISOString();
    for (const v of s.spec.volumes) {
      const vol = this.#d.observed.volumes.store.get(`${s.metadata.namespace}/${v.volume}`);
      if (!vol?.spec.storageClass) continue;
      const claimName = volumeClaimName(volumeIdOf(v.volume));
      const bound = vol.status?.boundCluster;
      if (bound && bound !== clusterId) continue;
      const idleReleaseSeconds = Math.round(this.#d.claimIdleMs / 1000);
      if (
        bound === clusterId &&
        vol.status?.claimName === claimName &&
        !vol.status.releaseAfter &&
        vol.status.idleReleaseSeconds === idleReleaseSeconds
      )
        continue;
      const path = resourcePath(VolumeKind, { namespace: s.metadata.namespace, name: v.volume, subresource: "status" });
      const res = await kube.request("PATCH", path, {
        body: {
          status: { boundCluster: clusterId, claimName, lastUsedAt: now, releaseAfter: null, idleReleaseSeconds },
        },
      });
      if (res.status >= 300 && res.status !== 404)
        throw new Error(`recording the claim of volume ${v.volume} on ${clusterId}: ${res.status}`);
    }
  }

  /** Records when an idle volume's claim will be released (null: a session uses it again). */
  async markReleaseAfter(vol: Volume, at: string | null): Promise<void> {
    const management = this.#d.management;
    if (!management) return;
    const res = await management.request("PATCH", this.#volumePath(vol), { body: { status: { releaseAfter: at } } });
    if (res.status >= 300 && res.status !== 404)
      throw new Error(`recording the release time of ${vol.metadata.name}: ${res.status}`);
  }

  #volumePath(vol: Volume): string {
    return resourcePath(VolumeKind, {
      namespace: vol.metadata.namespace,
      name: vol.metadata.name as string,
      subresource: "status",
    });
  }

  /**
   * Deletes an idle volume's claim on the cluster holding it (the data stays on the pool), then forgets
   * the cluster in the volume's status. The volume is marked releasing first (here and in its status,
   * for another leader), then `stillIdle` is asked again: a session that came since the idle pass keeps
   * the claim, and one that comes after the mark waits in mount() until the claim is gone. The status
   * keeps the cluster until the claim is really gone (a pod may still hold it), so no session lands
   * elsewhere meanwhile. A cluster that cannot be reached keeps the record and the mark: tried again.
   */
  async releaseClaim(vol: Volume, stillIdle: () => boolean = () => true): Promise<void> {
    const clusterId = vol.status?.boundCluster;
    const claim = vol.status?.claimName;
    const management = this.#d.management;
    if (!clusterId || !management) return;
    const key = `${vol.metadata.namespace}/${vol.metadata.name}`;
    if (!vol.status?.releasingSince && !this.#releasing.has(key)) {
      this.#releasing.add(key);
      if (this.#mounting.has(key) || !stillIdle()) {
        this.#releasing.delete(key);
        return;
      }
      const res = await management.request("PATCH", this.#volumePath(vol), {
        body: { status: { releasingSince: new Date().toISOString() } },
      });
      if (res.status === 404) {
        this.#releasing.delete(key);
        return;
      }
      if (res.status >= 300) {
        this.#releasing.delete(key);
        throw new Error(`marking the claim of ${vol.metadata.name} as releasing: ${res.status}`);
      }
    }
    this.#releasing.add(key);
    if (claim) {
      const kube = await this.#d.clients.client(clusterId);
      const path = `/api/v1/namespaces/${this.#d.namespace}/persistentvolumeclaims/${claim}`;
      const res = await kube.request("DELETE", path);
      if (res.status >= 300 && res.status !== 404)
        throw new Error(`releasing claim ${claim} on ${clusterId}: ${res.status}`);
      // Claim protection keeps a claim a pod mounts until the pod goes: wait for it to be gone.
      for (let i = 0; ; i++) {
        const got = await kube.request<{ metadata?: Record<string, unknown> }>("GET", path);
        if (got.status === 404) break;
        if (got.status >= 300) throw new Error(`looking at claim ${claim} on ${clusterId}: ${got.status}`);
        if (i >= 20)
          throw new Error(
            `claim ${claim} on ${clusterId} is still there after its delete (a pod holds it): ${JSON.stringify(got.body?.metadata ?? {}).slice(0, 400)}`,
          );
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    const res = await management.request("PATCH", this.#volumePath(vol), {
      body: {
        status: { boundCluster: null, claimName: null, lastUsedAt: null, releasingSince: null, releaseAfter: null },
      },
    });
    if (res.status >= 300 && res.status !== 404)
      throw new Error(`forgetting the claim of ${vol.metadata.name}: ${res.status}`);
    // Released: sessions waiting on the mark go once the informer shows the volume unbound.
    this.#released.add(key);
    this.#releasing.delete(key);
  }

  /**
   * A deleted volume's data goes once its grace period is over: on every cluster, the PersistentVolumes
   * whose handle is its data path, or that were bound to its claim (a driver that names a volume after
   * its claim, as the bed's hostpath driver does: e2e/src/testbed/csi-hostpath.ts), are handed back to
   * the storage driver (reclaim policy Delete: the driver's provisioner removes the data and the PV), then
   * the Volume resource goes. A cluster that cannot be reached keeps the resource: tried again on the next
   * pass.
   */
  async purgeVolume(vol: Volume, clusterIds: Iterable<string>): Promise<number> {
    const management = this.#d.management;
    if (!management) return 0;
    const handle = volumeDataPath(volumeIdOf(vol.metadata.name as string));
    const claim = volumeClaimName(volumeIdOf(vol.metadata.name as string));
    let reclaimed = 0;
    for (const clusterId of clusterIds) {
      const kube = await this.#d.clients.client(clusterId);
      const list = await kube.json<{
        items: {
          metadata: { name: string };
          spec?: {
            csi?: { volumeHandle?: string };
            claimRef?: { name?: string };
            persistentVolumeReclaimPolicy?: string;
          };
        }[];
      }>("GET", "/api/v1/persistentvolumes");
      for (const pv of list.items) {
        const ours = pv.spec?.csi?.volumeHandle === handle || pv.spec?.claimRef?.name === claim;
        if (!ours || pv.spec?.persistentVolumeReclaimPolicy === "Delete") continue;
        const res = await kube.request("PATCH", `/api/v1/persistentvolumes/${pv.metadata.name}`, {
          body: { spec: { persistentVolumeReclaimPolicy: "Delete" } },
        });
        if (res.status >= 300 && res.status !== 404)
          throw new Error(`handing ${pv.metadata.name} on ${clusterId} back to its driver: ${res.status}`);
        reclaimed++;
      }
    }
    const path = resourcePath(VolumeKind, { namespace: vol.metadata.namespace, name: vol.metadata.name as string });
    const res = await management.request("DELETE", path);
    if (res.status >= 300 && res.status !== 404) throw new Error(`deleting volume ${vol.metadata.name}: ${res.status}`);
    return reclaimed;
  }
}
