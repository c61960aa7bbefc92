// Dispatch: the session's mirror on its GPU cluster, written with that cluster's registered credential.
// The mirror is written by server-side apply (field manager: the controller's component, forced: the
// mirror is ours), so a retry, a new leader or a mirror written again after it was lost is the same
// request; restarts patch its restart count and revision; pause, terminate and strays delete it.
import {
  type Cluster,
  LABELS,
  labelValue,
  MIRROR_FINALIZER,
  type Session,
  type SessionMirror,
  SessionMirrorKind,
  sessionIdOf,
  type Volume,
  VolumeKind,
  volumeClaimName,
  volumeDataPath,
  volumeIdOf,
} from "@berth/crds";
import { type KubeApi, serverSideApply } from "../kube/client.ts";
import { type KubeObject, keyOf } from "../kube/informer.ts";
import type { MirrorOp } from "./lifecycle.ts";
import type { SessionMemory } from "./memory.ts";
import type { Observed } from "./observed.ts";
import type { WriteCounts } from "./options.ts";
import type { SessionStore } from "./store.ts";

/** Not a failure: a precondition that time resolves (requeue after `ms`, no backoff). */
export class RetryAfter extends Error {
  readonly ms: number;
  constructor(ms: number, message: string) {
    super(message);
    this.ms = ms;
  }
}

export interface DispatchDeps {
  /** The management cluster: Volume status (where a volume's claim is) is written there. */
  management?: KubeApi;
  store: SessionStore;
  observed: Observed;
  memory: SessionMemory;
  counts: WriteCounts;
  /** A client for a registered GPU cluster, from its stored credential. */
  clusterClient(cluster: Cluster): Promise<KubeApi>;
  /** Mirrors' namespace on GPU clusters. */
  namespace: string;
  /** Field manager of the applied mirrors. */
  fieldManager: string;
  /** How long a claim no session uses is kept (recorded on the volume, so the API can say when it goes). */
  claimIdleMs?: number;
  /** Look at this session again (a mirror found gone). */
  requeue(key: string): void;
  /** Run a placement pass (a stray's GPUs are free). */
  schedulePlacement(): void;
}

export class Dispatch {
  readonly #d: DispatchDeps;
  /** Volumes (namespace/name) whose claim is being released: no mirror mounts them until it is done. */
  readonly #releasing = new Set<string>();
  /** Released here, until the volumes' informer shows it (a mirror written before would see the old claim). */
  readonly #released = new Set<string>();
  /** Volumes (namespace/name) a mirror that mounts them is being written for: no release begins. */
  readonly #mounting = new Map<string, number>();
  readonly #clients = new Map<string, Promise<KubeApi>>();

  constructor(d: DispatchDeps) {
    this.#d = d;
  }

  async #client(clusterId: string): Promise<KubeApi> {
    let c = this.#clients.get(clusterId);
    if (!c) {
      const cr = this.#d.observed.clusterResource(clusterId);
      if (!cr) throw new Error(`cluster ${clusterId} has no Cluster resource`);
      c = this.#d.clusterClient(cr);
      this.#clients.set(clusterId, c);
      c.catch(() => this.#clients.delete(clusterId));
    }
    return c;
  }

  /** Lets go of the GPU clusters' connections. */
  close(): void {
    for (const c of this.#clients.values()) void c.then((k) => (k as { close?: () => void }).close?.()).catch(() => {});
    this.#clients.clear();
  }

  #path(name?: string): string {
    return `/apis/${SessionMirrorKind.group}/${SessionMirrorKind.version}/namespaces/${this.#d.namespace}/sessionmirrors${name ? `/${name}` : ""}`;
  }

  /** The mirror as the session's catalog resolves it now. */
  mirrorOf(s: Session, clusterId: string, revision: number, restartCount: number): SessionMirror {
    const o = this.#d.observed;
    const offering = o.offerings.store.get(s.spec.offering);
    const preset = o.presets.store.get(s.spec.preset);
    const image = o.images.store.get(s.spec.image);
    if (!offering || !preset || !image)
      throw new Error(
        `catalog objects of ${s.metadata.name} are missing (offering ${s.spec.offering}, preset ${s.spec.preset}, image ${s.spec.image})`,
      );
    const gpuCount = o.gpuCountOf(s) as number; // the offering is there (checked above)
    // Every cluster names a volume's claim alike and reaches the same data (crds/src/names.ts): the
    // operator where the session lands makes the claim when it is absent and waits for it to bind.
    const volumes = s.spec.volumes.flatMap((v, i) => {
      const vol = o.volumes.store.get(`${s.metadata.namespace}/${v.volume}`);
      if (!vol) return [];
      const volumeId = volumeIdOf(v.volume);
      const mountPath = v.mountPath ?? (i === 0 ? "/home/jovyan/work" : `/mnt/${v.volume}`);
      if (!vol.spec.storageClass) {
        const claim = vol.status?.claimName;
        return claim ? [{ claimName: claim, mountPath, readOnly: v.readOnly }] : [];
      }
      return [
        {
          claimName: volumeClaimName(volumeId),
          volumeId,
          storageClass: vol.spec.storageClass,
          sizeGb: vol.spec.sizeGb,
          dataPath: volumeDataPath(volumeId),
          mountPath,
          readOnly: v.readOnly,
        },
      ];
    });
    return SessionMirrorKind.build(
      {
        name: s.metadata.name as string,
        finalizers: [MIRROR_FINALIZER],
        namespace: this.#d.namespace,
        labels: {
          [LABELS.partOf]: "berth",
          [LABELS.sessionId]: sessionIdOf(s.metadata.name as string),
          [LABELS.owner]: labelValue(s.spec.owner),
          [LABELS.organization]: labelValue(s.spec.organization),
        },
      },
      {
        sessionId: sessionIdOf(s.metadata.name as string),
        source: { namespace: s.metadata.namespace as string, name: s.metadata.name as string },
        cluster: clusterId,
        owner: s.spec.owner,
        organization: s.spec.organization,
        ...(s.spec.project ? { project: s.spec.project } : {}),
        image: image.spec.image,
        imageKind: image.spec.kind,
        resources: {
          cpu: preset.spec.cpu,
          memory: preset.spec.memory,
          gpuCount,
          gpuModel: offering.spec.gpuModel,
          ...(s.spec.gpuSlice ? { gpuSlice: s.spec.gpuSlice } : {}),
          // Placed card by card (a sharing layer's cluster): the pod asks in its names and is pinned.
          ...(s.status?.gpuAssignment ? { gpuAssignment: s.status.gpuAssignment, gpuSharing: "hami" as const } : {}),
        },
        volumes,
        restartCount,
        revision,
      },
    );
  }

  /**
   * `at.strayAt`: a delete of a stray (Observed.strays), for its report of this time (its answer is not the
   * remembered mirror's). `at.revision`: the mirror revision the caller saw before its own status write; a
   * placement that the write started may have taken a new one by now, and the delete is about the old.
   */
  async run(
    s: Session,
    clusterId: string,
    op: MirrorOp,
    at: { strayAt?: string; revision?: number } = {},
  ): Promise<void> {
    if (op.op === "ensure") return this.#ensure(s, clusterId);
    if (op.op === "restart") return this.#restart(s, clusterId, op.restartCount);
    const revision =
      "revision" in at
        ? at.revision
        : this.#d.memory.mirrorStates.get(sessionIdOf(s.metadata.name as string))?.revision;
    return this.#delete(s, clusterId, op.propagation, at.strayAt, revision);
  }

  async #ensure(s: Session, clusterId: string): Promise<void> {
    const { memory, store, counts } = this.#d;
    const id = sessionIdOf(s.metadata.name as string);
    const name = s.metadata.name as string;
    const kube = await this.#client(clusterId);
    const known = memory.mirrors.get(id);
    if (known?.cluster === clusterId && known.state === "present") return;
    // The history row names the cluster already (the internal plane takes its operator's reports only
    // then): a placement is that row's record, made before the pass hands the session to its reconcile.
    const restarts = memory.mirrorStates.get(id)?.restarts ?? 0;
    // The placement pass took it (one batch for all it placed); a later ensure (a retry, a mirror
    // written again) takes its own.
    const reserved = memory.reserved.get(id);
    memory.reserved.delete(id);
    const revision = reserved ?? (await store.nextMirrorRevision(id));
    memory.mirrorStates.set(id, { revision, restarts });
    const stillGoing = () => new RetryAfter(1_000, `the mirror of ${name} on ${clusterId} is still being deleted`);
    // An earlier mirror of this session (revisions before this one) may still be going, its pod being
    // removed: applying over it would hand this revision to a mirror on its way out. Look first; the
    // session's first mirror needs no look.
    if (revision > 1) {
      const got = await kube.request<SessionMirror>("GET", this.#path(name));
      // Still going: look again soon, without the error backoff, which would grow for as long as a pod
      // takes to go.
      if (got.status === 200 && got.body.metadata.deletionTimestamp) throw stillGoing();
    }
    const mirror = this.mirrorOf(s, clusterId, revision, restarts);
    // A claim being released cannot be mounted (its pod would wait on a claim being deleted, then fail
    // with ClaimNotBound): wait until it is gone, then the operator makes it again where the session lands.
    const keys = s.spec.volumes.map((v) => `${s.metadata.namespace}/${v.volume}`);
    for (const key of keys) {
      const vol = this.#d.observed.volumes.store.get(key);
      if (this.#released.has(key) && !vol?.status?.boundCluster) this.#released.delete(key);
      if (this.#releasing.has(key) || this.#released.has(key) || vol?.status?.releasingSince) {
        counts.releaseWaits++;
        throw new RetryAfter(1_000, `the claim of volume ${key} on ${vol?.status?.boundCluster} is being released`);
      }
    }
    for (const key of keys) this.#mounting.set(key, (this.#mounting.get(key) ?? 0) + 1);
    let res: Awaited<ReturnType<typeof serverSideApply<SessionMirror>>>;
    try {
      await this.#bindVolumes(s, clusterId);
      res = await serverSideApply<SessionMirror>(kube, this.#path(name), mirror, {
        fieldManager: this.#d.fieldManager,
        force: true,
      });
    } finally {
      for (const key of keys) {
        const n = (this.#mounting.get(key) ?? 1) - 1;
        if (n > 0) this.#mounting.set(key, n);
        else this.#mounting.delete(key);
      }
    }
    if (res.status !== 201 && res.status !== 200)
      throw new Error(
        `writing the mirror of ${name} to ${clusterId}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`,
      );
    // A delete that began since the look: this revision went to a mirror on its way out; write it again
    // once that one is gone.
    if (res.body?.metadata?.deletionTimestamp) throw stillGoing();
    if (res.status === 201) counts.mirrorCreates++;
    else counts.mirrorUpdates++; // ours already (a retry, a new leader): now at this revision
    memory.mirrors.set(id, { cluster: clusterId, state: "present" });
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
      const idleReleaseSeconds = this.#d.claimIdleMs === undefined ? undefined : Math.round(this.#d.claimIdleMs / 1000);
      if (
        bound === clusterId &&
        vol.status?.claimName === claimName &&
        !vol.status.releaseAfter &&
        vol.status.idleReleaseSeconds === idleReleaseSeconds
      )
        continue;
      const path = `/apis/${VolumeKind.group}/${VolumeKind.version}/namespaces/${s.metadata.namespace}/${VolumeKind.plural}/${v.volume}/status`;
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
    return `/apis/${VolumeKind.group}/${VolumeKind.version}/namespaces/${vol.metadata.namespace}/${VolumeKind.plural}/${vol.metadata.name}/status`;
  }

  /**
   * Deletes an idle volume's claim on the cluster holding it (the data stays on the pool), then forgets
   * the cluster in the volume's status. The volume is marked releasing first (here and in its status,
   * for another leader), then `stillIdle` is asked again: a session that came since the idle pass keeps
   * the claim, and one that comes after the mark waits in #ensure until the claim is gone. The status
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
      const kube = await this.#client(clusterId);
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
      const kube = await this.#client(clusterId);
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
    const path = `/apis/${VolumeKind.group}/${VolumeKind.version}/namespaces/${vol.metadata.namespace}/${VolumeKind.plural}/${vol.metadata.name}`;
    const res = await management.request("DELETE", path);
    if (res.status >= 300 && res.status !== 404) throw new Error(`deleting volume ${vol.metadata.name}: ${res.status}`);
    return reclaimed;
  }

  async #restart(s: Session, clusterId: string, restartCount: number): Promise<void> {
    const { memory, store, counts } = this.#d;
    const id = sessionIdOf(s.metadata.name as string);
    const name = s.metadata.name as string;
    const kube = await this.#client(clusterId);
    const revision = await store.nextMirrorRevision(id, restartCount);
    const res = await kube.request("PATCH", this.#path(name), {
      body: { spec: { restartCount, revision } },
    });
    if (res.status >= 300 && res.status !== 404) throw new Error(`restarting ${name} on ${clusterId}: ${res.status}`);
    // Only once written (or the mirror is gone and is written again with it): a failed write left
    // as applied would drop the old pod's reports and never retry.
    memory.mirrorStates.set(id, { revision, restarts: restartCount });
    if (res.status === 404) {
      memory.mirrors.set(id, { cluster: clusterId, state: "absent" });
      return;
    }
    counts.mirrorUpdates++;
  }

  async #delete(
    s: Session,
    clusterId: string,
    propagation: Extract<MirrorOp, { op: "delete" }>["propagation"],
    strayAt: string | undefined,
    revision: number | undefined,
  ): Promise<void> {
    const { memory, counts } = this.#d;
    const stray = strayAt !== undefined;
    const id = sessionIdOf(s.metadata.name as string);
    const name = s.metadata.name as string;
    const kube = await this.#client(clusterId);
    // A placement since the revision was seen forgot what was known of the old mirror (and took a new one).
    const known = memory.mirrorStates.get(id)?.revision === revision ? memory.mirrors.get(id) : undefined;
    // A stray's cluster reports the mirror there: that stands against a remembered "absent".
    if (!stray && known?.cluster === clusterId && known.state === "absent") return;
    const res = await kube.request("DELETE", this.#path(name), {
      body: { apiVersion: "v1", kind: "DeleteOptions", propagationPolicy: propagation },
    });
    // A placement meanwhile (back on this cluster) took a new revision for a new mirror: this answer is
    // about the old one and must not stand for it (read as present, the new one would never be written).
    const replaced = memory.mirrorStates.get(id)?.revision !== revision;
    if (res.status === 404) {
      if (stray) {
        memory.straysGone.set(id, (memory.straysGone.get(id) ?? new Map()).set(clusterId, strayAt));
        this.#d.schedulePlacement();
        return;
      }
      if (!replaced) memory.mirrors.set(id, { cluster: clusterId, state: "absent" });
      this.#d.requeue(keyOf(s as KubeObject));
      return;
    }
    if (res.status >= 300 && res.status !== 409)
      throw new Error(`deleting the mirror of ${name} on ${clusterId}: ${res.status}`);
    if (stray || known?.state !== "deleting") counts.mirrorDeletes++;
    if (!replaced && !stray) memory.mirrors.set(id, { cluster: clusterId, state: "deleting" });
  }
}
