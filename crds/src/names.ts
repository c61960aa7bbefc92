// Ids, names, labels and annotations shared by the control plane, the operator and the API. A session has a
// REST id `ses_<20 chars>` and a resource name `ses-<same>`: the id is what users and reports name, the
// resource name is what Kubernetes (and the connect links, /proxy/{cr}/…) name. One maps onto the other.
import { createHash, randomBytes } from "node:crypto";

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

export const SESSION_ID = /^ses_[a-z0-9]{20}$/;

/** A fresh session id: 20 characters of a 36-letter alphabet (about 103 bits), from a CSPRNG. */
export function newSessionId(): string {
  return `ses_${randomTail()}`;
}

/**
 * The session id a create derives from its Idempotency-Key claim (caller, route, key and the claim's first
 * time): a create taken over after a crash makes the same id, so it finds what the first attempt made
 * instead of making a second session.
 */
export function sessionIdFromSeed(seed: string): string {
  const digest = (i: number) => createHash("sha256").update(`${i}\n${seed}`).digest();
  let extra: Buffer = Buffer.alloc(0);
  return `ses_${tailOf(digest(0), (i) => {
    const j = i - 32;
    if (j >= extra.length) extra = Buffer.concat([extra, digest(1 + Math.floor(j / 32))]);
    return extra[j] as number;
  })}`;
}

/** A volume has a REST id `vol_<20 chars>` and a resource name `vol-<same>`, like a session. */
export const VOLUME_ID = /^vol_[a-z0-9]{20}$/;

export function newVolumeId(): string {
  return `vol_${randomTail()}`;
}

export function volumeResourceName(id: string): string {
  return id.replace("_", "-");
}

export function volumeIdOf(resourceName: string): string {
  return resourceName.replace("-", "_");
}

/**
 * The claim's name on whichever cluster mounts the volume: the same everywhere, so an operator that
 * restarts mid-create finds its own claim instead of making a second one.
 */
export function volumeClaimName(volumeId: string): string {
  return `berth-${volumeResourceName(volumeId)}`;
}

/** A volume snapshot has a REST id `snap_<20 chars>`; its VolumeSnapshot on a GPU cluster is `berth-snap-<same>`. */
export const SNAPSHOT_ID = /^snap_[a-z0-9]{20}$/;

export function newSnapshotId(): string {
  return `snap_${randomTail()}`;
}

export function snapshotObjectName(id: string): string {
  return `berth-${id.replace("_", "-")}`;
}

/** Where the volume's data sits on its pool: derived from the id alone, so every cluster's claim reaches it. */
export function volumeDataPath(volumeId: string): string {
  return `berth/volumes/${volumeResourceName(volumeId)}`;
}

function randomTail(): string {
  return tailOf(randomBytes(20), () => randomBytes(1)[0] as number);
}

/** 20 letters from `bytes`, then from `more`; 252 = 7 * 36: bytes at or above it are rejected, so every letter is equally likely. */
function tailOf(bytes: Uint8Array, more: (i: number) => number): string {
  let s = "";
  for (let i = 0; s.length < 20; i++) {
    const b = i < bytes.length ? (bytes[i] as number) : more(i);
    if (b < 252) s += ALPHABET[b % 36];
  }
  return s;
}

export function sessionResourceName(id: string): string {
  return id.replace("_", "-");
}

export function sessionIdOf(resourceName: string): string {
  return resourceName.replace("-", "_");
}

/** An image build's resource name (its ImageBuild, Job and ConfigMap): `build-` and the id after `bld-`. */
export function buildResourceName(buildId: string): string {
  return `build-${buildId.slice(4)}`;
}

/** The management cluster namespace that holds an organization's Session resources. */
export function organizationNamespace(organizationId: string): string {
  // org_abc → org-abc, as Cluster resources are named from clu_ ids.
  return organizationId
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63)
    .replace(/-+$/, "");
}

export const LABELS = {
  name: "app.kubernetes.io/name",
  component: "app.kubernetes.io/component",
  managedBy: "app.kubernetes.io/managed-by",
  partOf: "app.kubernetes.io/part-of",
  session: "berth.dev/session",
  sessionId: "berth.dev/session-id",
  owner: "berth.dev/owner",
  organization: "berth.dev/organization",
  project: "berth.dev/project",
  restart: "berth.dev/restart",
  volumeId: "berth.dev/volume-id",
  /** On a VolumeSnapshot Berth made on a GPU cluster: the snapshot's REST id. */
  snapshotId: "berth.dev/snapshot-id",
  pool: "berth.dev/pool",
  /** On the node a pool's storage server runs on: its system drive is the pool's `node_disk` stand-in. */
  storageNode: "berth.dev/storage-node",
  /** On a management namespace the API made for an organization's sessions: `organization`. */
  role: "berth.dev/role",
  /** On a GPU cluster's credential Secret: the Cluster resource's name. */
  cluster: "berth.dev/cluster",
  /** On a wallet's mirror in the management cluster: the wallet's id. */
  walletId: "berth.dev/wallet-id",
  /** On the default catalog's resources made at start-up: `default`. */
  catalog: "berth.dev/catalog",
} as const;

export const ANNOTATIONS = {
  /** On a management Session: how many restarts were asked for. The API bumps it; the worker obeys it. */
  restarts: "berth.dev/restarts",
  /** On a management Session: who created it, for `kubectl describe`. */
  createdBy: "berth.dev/created-by",
  /**
   * On a management Session: when it was accepted, in milliseconds (creationTimestamp has whole seconds,
   * and the queue's "older first" must not depend on which of two sessions of the same second sorts first).
   */
  createdAt: "berth.dev/created-at",
  /** On a Secret the API keeps for itself: what it holds, for `kubectl describe`. */
  purpose: "berth.dev/purpose",
  /**
   * On a deleted Volume kept for its grace period: when its data goes (RFC 3339). It mounts nowhere, its
   * claim is released at once, and after that time the worker removes it (its owner may undo before).
   */
  volumePurgeAfter: "berth.dev/purge-after",
} as const;

/** Kubernetes label values: 63 characters of [A-Za-z0-9_.-], starting and ending alphanumeric. */
export function labelValue(v: string): string {
  const cleaned = v.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 63);
  return cleaned.replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
}

/** Where a GPU cluster keeps session mirrors, pods, services and policies (the operator's install creates it). */
export const DEFAULT_SESSIONS_NAMESPACE = "berth-sessions";
/** Where a GPU cluster's gateway runs: the only pods a session's NetworkPolicy admits. */
export const DEFAULT_GATEWAY_NAMESPACE = "berth-system";
export const GATEWAY_POD_LABELS = { [LABELS.name]: "berth-gateway" } as const;
/** The operator's pods: the only other ones a session pod admits (it reads the notebook server's status). */
export const OPERATOR_POD_LABELS = { [LABELS.name]: "berth-operator" } as const;

/**
 * On every SessionMirror from its creation (no extra write): the operator removes it once the pod,
 * service and policy are gone, so a mirror that disappeared means its GPU is free.
 */
export const MIRROR_FINALIZER = "berth.dev/session-cleanup";

/**
 * On a management Session: why it is to be paused — PausedByUser (the API's pause) or a system reason
 * such as InsufficientCredits (billing). The Ready condition and the Event carry it.
 */
export const PAUSE_REASON_ANNOTATION = "berth.dev/pause-reason";

/**
 * On a management Session: the owner's last "keep running", JSON `{"period":<startedAt>,"count":n,"at":<iso>}`.
 * The API writes it (counted per run period); the worker's reclaim loop treats `at` as activity.
 */
export const KEEP_RUNNING_ANNOTATION = "berth.dev/keep-running";

/** GPU feature discovery's labels (NVIDIA gpu-feature-discovery / the GPU operator) and the GPU resource. */
export const GPU_RESOURCE = "nvidia.com/gpu";
export const GPU_PRODUCT_LABEL = "nvidia.com/gpu.product";
export const GPU_COUNT_LABEL = "nvidia.com/gpu.count";
export const GPU_MEMORY_LABEL = "nvidia.com/gpu.memory";
/** Ours: a node's GPU UUIDs in index order, comma-separated (no standard label carries them). */
export const GPU_UUIDS_ANNOTATION = "berth.dev/gpu-uuids";
