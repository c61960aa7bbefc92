// Dispatch: the session's mirror on its GPU cluster, written with that cluster's registered credential.
// The mirror is written by server-side apply (field manager: the controller's component, forced: the
// mirror is ours), so a retry, a new leader or a mirror written again after it was lost is the same
// request; restarts patch its restart count and revision; pause, terminate and strays delete it. The
// volumes it mounts are claims-pass.ts's: it records them where the mirror lands, and holds a mirror back
// while a claim of them is released.
import {
  LABELS,
  labelValue,
  MIRROR_FINALIZER,
  resourcePath,
  type Session,
  type SessionMirror,
  SessionMirrorKind,
  sessionIdOf,
  volumeClaimName,
  volumeDataPath,
  volumeIdOf,
} from "@berth/crds";
import { serverSideApply } from "../kube/client.ts";
import { type KubeObject, keyOf } from "../kube/informer.ts";
import { mayUseNode } from "../placement/constraints.ts";
import type { NodePoolRef } from "../placement/types.ts";
import type { ClaimsPass } from "./claims-pass.ts";
import type { GpuClusterClients } from "./cluster-clients.ts";
import type { MirrorOp } from "./lifecycle.ts";
import type { SessionMemory } from "./memory.ts";
import type { Observed } from "./observed.ts";
import type { WriteCounts } from "./options.ts";
import { RetryAfter } from "./retry-after.ts";
import type { SessionStore } from "./store.ts";
import { tenancyOf } from "./tenancy.ts";

export interface DispatchDeps {
  store: SessionStore;
  observed: Observed;
  memory: SessionMemory;
  counts: WriteCounts;
  /** The GPU clusters' clients. */
  clients: GpuClusterClients;
  /** The sessions' volume claims: a mirror is written through claims.mount. */
  claims: ClaimsPass;
  /** Mirrors' namespace on GPU clusters. */
  namespace: string;
  /** Field manager of the applied mirrors. */
  fieldManager: string;
  /** Look at this session again (a mirror found gone). */
  requeue(key: string): void;
  /** Run a placement pass (a stray's GPUs are free). */
  schedulePlacement(): void;
}

export class Dispatch {
  readonly #d: DispatchDeps;

  constructor(d: DispatchDeps) {
    this.#d = d;
  }

  #client(clusterId: string) {
    return this.#d.clients.client(clusterId);
  }

  #path(name?: string): string {
    return resourcePath(SessionMirrorKind, { namespace: this.#d.namespace, ...(name ? { name } : {}) });
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
          ...(s.spec.migProfile ? { migProfile: s.spec.migProfile } : {}),
          // Placed card by card (a sharing layer's cluster): the pod asks in its names and is pinned.
          ...(s.status?.gpuAssignment ? { gpuAssignment: s.status.gpuAssignment, gpuSharing: "hami" as const } : {}),
          ...avoidNodeLabelsOf(this.#d.observed.nodePools, clusterId, s),
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
    // with ClaimNotBound): claims.mount waits until it is gone, then the operator makes it again where
    // the session lands.
    const res = await this.#d.claims.mount(s, clusterId, () =>
      serverSideApply<SessionMirror>(kube, this.#path(name), mirror, {
        fieldManager: this.#d.fieldManager,
        force: true,
      }),
    );
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

/** The labels of the cluster's node pools not granted to the session: its pod is kept off their nodes. */
export function avoidNodeLabelsOf(
  pools: readonly NodePoolRef[],
  clusterId: string,
  s: Session,
): { avoidNodeLabels?: { key: string; values: string[] }[] } {
  const tenancy = tenancyOf(s);
  const denied = pools.filter((p) => p.clusterId === clusterId && !mayUseNode(tenancy, [p]));
  if (denied.length === 0) return {};
  return { avoidNodeLabels: denied.map((p) => ({ key: p.label.key, values: [...p.label.values] })) };
}
