// A new volume: the row, then the resource; the row is removed when the resource cannot be written, so
// nothing is half-made.

import { KubeError } from "@berth/controllers/kube";
import {
  LABELS,
  labelValue,
  newVolumeId,
  organizationNamespace,
  type Pool,
  VolumeKind,
  volumeResourceName,
} from "@berth/crds";
import type { Knex } from "knex";
import { insertVolume } from "../../db/operations/volumes/insertVolume.ts";
import { lockVolumeTotals } from "../../db/operations/volumes/provisioned.ts";
import { deleteVolumeRow } from "../../db/operations/volumes/updateVolume.ts";
import { sqlState, UNIQUE_VIOLATION } from "../../db/sqlstate.ts";
import type { Deps } from "../../deps.ts";
import { Invalid } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { resolveOwnership } from "../sessions/ownership.ts";
import { readPool, readPools } from "./pools.ts";
import { requestPatiently, storageRuntimeOf, unreachable, volumePath } from "./runtime.ts";
import { checkRoom, nameTaken, priced, type VolumeView } from "./volumeParts.ts";

export interface CreateVolumeInput {
  name: string;
  size_gb: number;
  pool?: string | undefined;
  project_id?: string | undefined;
  organization_id?: string | undefined;
}

const FIELD_MANAGER = "berth-api";

/** The pool named, or the default one (the only one when there is just one). */
async function choosePool(deps: Deps, name: string | undefined): Promise<Pool> {
  if (name) {
    const pool = await readPool(deps, name);
    if (!pool)
      throw new Invalid("the request is invalid", [
        { path: ["body", "pool"], message: "no such pool", code: "invalid_reference" },
      ]);
    return pool;
  }
  const pools = await readPools(deps);
  const chosen = pools.find((p) => p.spec.default) ?? (pools.length === 1 ? pools[0] : undefined);
  if (!chosen)
    throw new Invalid("the request is invalid", [
      {
        path: ["body", "pool"],
        message:
          pools.length === 0
            ? "no storage pool exists yet; an administrator must create one"
            : "no pool is the default; name one",
        code: "invalid_reference",
      },
    ]);
  return chosen;
}

/**
 * A volume made from a snapshot (domain/snapshots/restoreSnapshot.ts): the snapshot's row is locked and
 * checked in the creating transaction, so a delete of the snapshot either sees this volume or came first.
 */
export interface RestoreFrom {
  snapshotId: string;
  check(tx: Knex.Transaction): Promise<void>;
}

export async function createVolume(
  deps: Deps,
  principal: Principal,
  input: CreateVolumeInput,
  restore?: RestoreFrom,
): Promise<VolumeView> {
  const rt = storageRuntimeOf(deps);
  const { organizationId, projectId } = await resolveOwnership(deps, principal, input);
  const pool = await choosePool(deps, input.pool);
  const id = newVolumeId();
  const namespace = organizationNamespace(organizationId);
  const now = deps.clock.now();
  const owner = projectId
    ? { kind: "project" as const, id: projectId }
    : { kind: "user" as const, id: principal.userId };
  const base = {
    id,
    organization_id: organizationId,
    owner_kind: owner.kind,
    owner_id: owner.id,
    name: input.name,
    size_gb: input.size_gb,
    pool: pool.metadata.name ?? "",
    namespace,
    cr_name: volumeResourceName(id),
    created_by: principal.userId,
    created_at: now,
    updated_at: now,
    ...(restore ? { restored_from: restore.snapshotId } : {}),
  };
  const row = await deps.db
    .transaction(async (tx) => {
      await lockVolumeTotals(tx, owner.kind, owner.id, base.pool);
      // Read again under the lock: a pool deleted meanwhile takes no volume.
      const current = await readPool(deps, base.pool);
      if (!current)
        throw new Invalid("the request is invalid", [
          { path: ["body", "pool"], message: "no such pool", code: "invalid_reference" },
        ]);
      await restore?.check(tx);
      await checkRoom(deps, tx, base, current, input.size_gb);
      return insertVolume(tx, base);
    })
    .catch((e: unknown) => {
      throw sqlState(e) === UNIQUE_VIOLATION ? nameTaken(input.name) : e;
    });
  try {
    await rt.ensureNamespace(namespace);
    const cr = VolumeKind.build(
      {
        name: row.cr_name,
        namespace,
        labels: {
          [LABELS.partOf]: "berth",
          [LABELS.volumeId]: id,
          [LABELS.organization]: labelValue(organizationId),
          [LABELS.pool]: labelValue(base.pool),
          ...(owner.kind === "user"
            ? { [LABELS.owner]: labelValue(owner.id) }
            : { [LABELS.project]: labelValue(owner.id) }),
        },
      },
      {
        owner,
        organization: organizationId,
        displayName: input.name,
        sizeGb: input.size_gb,
        pool: base.pool,
        storageClass: pool.spec.storageClass,
      },
    );
    const res = await requestPatiently(rt.kube, "POST", volumePath(namespace), {
      body: cr,
      query: { fieldManager: FIELD_MANAGER },
    }).catch(unreachable("creating a volume"));
    if (res.status >= 300) throw new KubeError("POST", volumePath(namespace), res.status, res.body);
    return priced(deps, { row, cr: VolumeKind.schema.parse(res.body), mounts: [] });
  } catch (e) {
    await deleteVolumeRow(deps.db, id);
    throw e;
  }
}
