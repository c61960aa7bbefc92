// Volumes: a row in Postgres (lists, quotas and pool totals, added up under a lock) and a Volume resource
// in the organization's namespace (what the operators reconcile into claims). A create writes the row,
// then the resource, and removes the row when the resource cannot be written: nothing is half-made.

import { KubeError } from "@berth/controllers/kube";
import {
  ANNOTATIONS,
  LABELS,
  labelValue,
  newVolumeId,
  organizationNamespace,
  type Pool,
  resourcePath,
  sessionIdOf,
  type Volume,
  VolumeKind,
  volumeResourceName,
} from "@berth/crds";
import type { Knex } from "knex";
import { listMembershipsOfUser } from "../../db/operations/memberships/listMembershipsOfUser.ts";
import { findProjectById } from "../../db/operations/projects/findProjectById.ts";
import { findSessionById } from "../../db/operations/sessions/findSessionById.ts";
import { findDeletedVolumeById, findVolumeById } from "../../db/operations/volumes/findVolumeById.ts";
import { insertVolume } from "../../db/operations/volumes/insertVolume.ts";
import { listVolumes } from "../../db/operations/volumes/listVolumes.ts";
import { lockVolumeTotals, provisionedByOwner, provisionedByPool } from "../../db/operations/volumes/provisioned.ts";
import { replaceVolumeShares } from "../../db/operations/volumes/replaceVolumeShares.ts";
import type { VolumeRow } from "../../db/operations/volumes/types.ts";
import { deleteVolumeRow, updateVolume } from "../../db/operations/volumes/updateVolume.ts";
import { sqlState, UNIQUE_VIOLATION } from "../../db/sqlstate.ts";
import type { Deps } from "../../deps.ts";
import { Conflict, DomainError, Forbidden, Invalid, NotFound, QuotaExceeded } from "../../errors.ts";
import { storageCostOf, storageRate } from "../credits/storage.ts";
import type { Principal } from "../identity/principal.ts";
import { scopeOf } from "../identity/scope.ts";
import { effectiveLimit } from "../sessions/checkQuota.ts";
import { resolveOwnership } from "../sessions/createSession.ts";
import { canSeeSession } from "../sessions/visibility.ts";
import { canLockVolume, canManageVolume, canSeeVolume, ownsVolume, sharedWith } from "./access.ts";
import { capacityOf } from "./capacity.ts";
import { capacityContext, poolViews, readPool, readPools } from "./pools.ts";
import { namespacedSessionsPath, requestPatiently, storageRuntimeOf, unreachable, volumePath } from "./runtime.ts";
import { storageSettings } from "./settings.ts";

export interface VolumeView {
  row: VolumeRow;
  /** The resource: shares, lock, bound cluster, claim, used. Absent only if it vanished underneath. */
  cr: Volume | undefined;
  /** Sessions (resource names) that mount it and are not terminated. */
  mounts?: { session: string; readOnly: boolean; mountPath: string | null }[];
  /** What it costs per hour at the storage rate (units, rounded up), running sessions or not. */
  hourlyCost?: bigint;
  /** Seen only through a share with the caller: how they may mount it. */
  sharedWithMe?: "read_only" | "read_write";
}

/** Adds each view's hourly cost at the fleet's storage rate (one read). */
async function priced<T extends VolumeView | VolumeView[]>(deps: Deps, v: T): Promise<T> {
  const rate = await storageRate(deps.db);
  for (const x of Array.isArray(v) ? v : [v]) x.hourlyCost = storageCostOf(rate, x.row.size_gb, 3600);
  return v;
}

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

/** The resource policy's quota for `addGb` more, inside the locking transaction. */
async function checkQuota(
  deps: Deps,
  tx: Knex.Transaction,
  row: Pick<VolumeRow, "organization_id" | "owner_kind" | "owner_id">,
  addGb: number,
) {
  const policies = await storageRuntimeOf(deps).policies();
  const project = row.owner_kind === "project";
  const limitName = project ? "maxVolumeGbPerProject" : "maxVolumeGbPerUser";
  const limit = effectiveLimit(policies, limitName, {
    organizationId: row.organization_id,
    projectId: project ? row.owner_id : null,
    ...(project ? {} : { userId: row.owner_id }),
  });
  if (limit) {
    const current = await provisionedByOwner(tx, row.owner_kind, row.owner_id);
    if (current + addGb > limit.value)
      throw new QuotaExceeded(
        `this would hold ${current + addGb} GB of volumes; the limit is ${limit.value} GB (${limit.scope})`,
        {
          limit: project ? "max_volume_gb_per_project" : "max_volume_gb_per_user",
          value: limit.value,
          current_gb: current,
          requested_gb: addGb,
          scope: limit.scope,
        },
      );
  }
}

/** Quota (resource policy) and room on the pool for `addGb` more, inside the locking transaction. */
async function checkRoom(
  deps: Deps,
  tx: Knex.Transaction,
  row: Pick<VolumeRow, "organization_id" | "owner_kind" | "owner_id">,
  pool: Pool,
  addGb: number,
) {
  await checkQuota(deps, tx, row, addGb);
  const poolName = pool.metadata.name ?? "";
  const used = (await provisionedByPool(tx, deps.clock.now())).get(poolName)?.gb ?? 0;
  const cap = capacityOf(pool, used, (await capacityContext(deps, tx))(pool));
  if (cap && cap.availableGb < addGb) {
    const all = await poolViews(deps);
    const pools = all.map((v) => ({
      pool: v.pool.metadata.name,
      available_gb: v.capacity?.availableGb ?? null,
      source: v.capacity?.source ?? null,
    }));
    throw new DomainError(
      "pool_capacity_exceeded",
      `pool ${poolName} has ${cap.availableGb} GB free; ${addGb} GB do not fit (pools are not added together)`,
      {
        requested_gb: addGb,
        pool: poolName,
        pools,
        largest_available_gb: Math.max(0, ...pools.map((p) => p.available_gb ?? 0)),
      },
    );
  }
}

function nameTaken(name: string) {
  return new Conflict(`you already have a volume named ${name}`, { name }, "already_exists");
}

export async function createVolume(deps: Deps, principal: Principal, input: CreateVolumeInput): Promise<VolumeView> {
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

async function readVolumeCr(deps: Deps, row: VolumeRow): Promise<Volume | undefined> {
  const res = await storageRuntimeOf(deps)
    .kube.request("GET", volumePath(row.namespace, row.cr_name))
    .catch(unreachable("reading a volume"));
  if (res.status === 404) return undefined;
  if (res.status >= 300) throw new KubeError("GET", volumePath(row.namespace, row.cr_name), res.status, res.body);
  return VolumeKind.schema.parse(res.body);
}

/** Sessions of the volume's namespace that mount it and are not (being) terminated. */
async function mountsOf(deps: Deps, row: VolumeRow): Promise<NonNullable<VolumeView["mounts"]>> {
  const list = await storageRuntimeOf(deps)
    .kube.json<{
      items: {
        metadata: { name: string };
        spec?: { desiredState?: string; volumes?: { volume: string; readOnly?: boolean; mountPath?: string }[] };
        status?: { phase?: string };
      }[];
    }>("GET", namespacedSessionsPath(row.namespace))
    .catch(unreachable("listing sessions"));
  return list.items.flatMap((s) => {
    if (s.spec?.desiredState === "Terminated" || s.status?.phase === "Terminated") return [];
    const m = s.spec?.volumes?.find((v) => v.volume === row.cr_name);
    return m ? [{ session: s.metadata.name, readOnly: m.readOnly ?? false, mountPath: m.mountPath ?? null }] : [];
  });
}

/** The volume as the caller may see it; 404 when it is not theirs to see (existence not revealed). */
async function visible(
  deps: Deps,
  principal: Principal,
  id: string,
): Promise<{ row: VolumeRow; cr: Volume | undefined }> {
  const row = await findVolumeById(deps.db, id);
  if (!row) throw new NotFound("volume", id);
  const scope = scopeOf(principal);
  const cr = scope.organizations.has(row.organization_id) || scope.all ? await readVolumeCr(deps, row) : undefined;
  if (!canSeeVolume(scope, row, cr)) throw new NotFound("volume", id);
  return { row, cr };
}

async function manageable(deps: Deps, principal: Principal, id: string) {
  const v = await visible(deps, principal, id);
  if (!canManageVolume(scopeOf(principal), v.row))
    throw new Forbidden("only the volume's owner or an administrator may change it");
  return v;
}

function refuseLocked(cr: Volume | undefined, id: string) {
  if (cr?.spec.locked)
    throw new Conflict(`volume ${id} is locked`, { volume: id, reason: cr.spec.lockReason ?? null }, "volume_locked");
}

export async function getVolume(deps: Deps, principal: Principal, id: string): Promise<VolumeView> {
  const v = await visible(deps, principal, id);
  return priced(deps, { ...v, ...sharedMark(scopeOf(principal), v.row, v.cr), mounts: await mountsOf(deps, v.row) });
}

/** How the caller may mount a volume they see only through a share (nothing when they own it). */
function sharedMark(s: ReturnType<typeof scopeOf>, row: VolumeRow, cr: Volume | undefined) {
  if (ownsVolume(s, row)) return {};
  const shares = sharedWith(s, cr);
  if (shares.length === 0) return {};
  return {
    sharedWithMe: shares.some((x) => x.access === "ReadWrite") ? ("read_write" as const) : ("read_only" as const),
  };
}

async function patchCr(deps: Deps, row: VolumeRow, spec: Record<string, unknown>): Promise<Volume> {
  const res = await storageRuntimeOf(deps)
    .kube.request("PATCH", volumePath(row.namespace, row.cr_name), { body: { spec } })
    .catch(unreachable("updating a volume"));
  if (res.status >= 300) throw new KubeError("PATCH", volumePath(row.namespace, row.cr_name), res.status, res.body);
  return VolumeKind.schema.parse(res.body);
}

export async function updateVolumeOf(
  deps: Deps,
  principal: Principal,
  id: string,
  input: { name?: string | undefined; size_gb?: number | undefined },
): Promise<VolumeView> {
  const { row, cr } = await manageable(deps, principal, id);
  if (input.size_gb !== undefined && input.size_gb !== row.size_gb) {
    refuseLocked(cr, id);
    if (input.size_gb < row.size_gb)
      throw new Invalid("the request is invalid", [
        {
          path: ["body", "size_gb"],
          message: `a volume only grows: it has ${row.size_gb} GB; give more`,
          code: "too_small",
        },
      ]);
  }
  const grow = input.size_gb !== undefined && input.size_gb > row.size_gb ? input.size_gb - row.size_gb : 0;
  const now = deps.clock.now();
  const updated = await deps.db
    .transaction(async (tx) => {
      if (grow > 0) {
        await lockVolumeTotals(tx, row.owner_kind, row.owner_id, row.pool);
        const pool = await readPool(deps, row.pool);
        if (pool) await checkRoom(deps, tx, row, pool, grow);
      }
      return updateVolume(tx, id, {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(grow > 0 ? { size_gb: input.size_gb } : {}),
        updated_at: now,
      });
    })
    .catch((e: unknown) => {
      throw sqlState(e) === UNIQUE_VIOLATION ? nameTaken(input.name ?? "") : e;
    });
  if (!updated) throw new NotFound("volume", id);
  try {
    const next = await patchCr(deps, row, {
      ...(input.name !== undefined ? { displayName: input.name } : {}),
      ...(grow > 0 ? { sizeGb: updated.size_gb } : {}),
    });
    return priced(deps, { row: updated, cr: next, mounts: await mountsOf(deps, updated) });
  } catch (e) {
    // The resource keeps the old figures: so does the row.
    await updateVolume(deps.db, id, { name: row.name, size_gb: row.size_gb, updated_at: now });
    throw e;
  }
}

export async function lockVolume(
  deps: Deps,
  principal: Principal,
  id: string,
  lock: { locked: boolean; reason?: string | undefined },
): Promise<VolumeView> {
  const { row } = await visible(deps, principal, id);
  if (!canLockVolume(scopeOf(principal), row)) throw new Forbidden("only administrators lock and unlock volumes");
  const cr = await patchCr(deps, row, { locked: lock.locked, lockReason: lock.locked ? (lock.reason ?? null) : null });
  return priced(deps, { row, cr, mounts: await mountsOf(deps, row) });
}

/**
 * Deletes a volume: its claim goes at once (the worker releases it), its data after the grace period
 * (storage settings, default 24 h), until which its owner may restore it. The row keeps `deleted_at` and
 * `purge_after`; the resource stays, marked with ANNOTATIONS.volumePurgeAfter, so nothing mounts it.
 */
export async function deleteVolume(deps: Deps, principal: Principal, id: string): Promise<VolumeView> {
  const { row, cr } = await manageable(deps, principal, id);
  refuseLocked(cr, id);
  const mounts = await mountsOf(deps, row);
  if (mounts.length > 0)
    throw new Conflict(
      `volume ${id} is mounted by ${mounts.length} session(s)`,
      { volume: id, sessions: mounts.map((m) => sessionIdOf(m.session)) },
      "volume_in_use",
    );
  const now = deps.clock.now();
  const grace = (await storageSettings(deps.db)).delete_grace_hours;
  const purgeAfter = new Date(now.getTime() + grace * 3_600_000);
  const res = await storageRuntimeOf(deps)
    .kube.request("PATCH", volumePath(row.namespace, row.cr_name), {
      body: { metadata: { annotations: { [ANNOTATIONS.volumePurgeAfter]: purgeAfter.toISOString() } } },
    })
    .catch(unreachable("deleting a volume"));
  if (res.status >= 300 && res.status !== 404)
    throw new KubeError("PATCH", volumePath(row.namespace, row.cr_name), res.status, res.body);
  const updated = await updateVolume(deps.db, id, { deleted_at: now, purge_after: purgeAfter, updated_at: now });
  return priced(deps, {
    row: updated ?? row,
    cr: res.status < 300 ? VolumeKind.schema.parse(res.body) : cr,
    mounts: [],
  });
}

/** Undoes a delete within its grace period: the volume is as it was (its name must still be free). */
export async function restoreVolume(deps: Deps, principal: Principal, id: string): Promise<VolumeView> {
  const row = await findDeletedVolumeById(deps.db, id);
  const scope = scopeOf(principal);
  if (!row || !canSeeVolume(scope, row, undefined)) throw new NotFound("volume", id);
  if (!canManageVolume(scope, row)) throw new Forbidden("only the volume's owner or an administrator may restore it");
  const now = deps.clock.now();
  if (!row.purge_after || row.purge_after.getTime() <= now.getTime())
    throw new Conflict(
      `volume ${id} was deleted and its grace period ended${row.purge_after ? ` at ${row.purge_after.toISOString()}` : ""}; its data is gone`,
      { volume: id, purge_after: row.purge_after?.toISOString() ?? null },
      "volume_purged",
    );
  const restored = await deps.db
    .transaction(async (tx) => {
      await lockVolumeTotals(tx, row.owner_kind, row.owner_id, row.pool);
      // Quota again: the owner may have made other volumes meanwhile (pool room: the data never left).
      const pool = await readPool(deps, row.pool);
      if (pool) await checkQuota(deps, tx, row, row.size_gb);
      return updateVolume(tx, id, { deleted_at: null, purge_after: null, updated_at: now });
    })
    .catch((e: unknown) => {
      throw sqlState(e) === UNIQUE_VIOLATION ? nameTaken(row.name) : e;
    });
  const res = await storageRuntimeOf(deps)
    .kube.request("PATCH", volumePath(row.namespace, row.cr_name), {
      body: { metadata: { annotations: { [ANNOTATIONS.volumePurgeAfter]: null } } },
    })
    .catch(unreachable("restoring a volume"));
  if (res.status >= 300) {
    await updateVolume(deps.db, id, { deleted_at: row.deleted_at, purge_after: row.purge_after, updated_at: now });
    throw new KubeError("PATCH", volumePath(row.namespace, row.cr_name), res.status, res.body);
  }
  return priced(deps, { row: restored ?? row, cr: VolumeKind.schema.parse(res.body), mounts: [] });
}

/** One page of the volumes the caller may see (own, their projects', their administered organizations'). */
export async function listVolumeViews(
  deps: Deps,
  principal: Principal,
  q: {
    page: number;
    size: number;
    organization_id?: string | undefined;
    project_id?: string | undefined;
    pool?: string | undefined;
    deleted?: boolean | undefined;
  },
): Promise<{ views: VolumeView[]; total: number }> {
  const s = scopeOf(principal);
  const { rows, total } = await listVolumes(
    deps.db,
    s.all
      ? { all: true }
      : {
          all: false,
          ownerId: s.userId,
          ownerOrganizationIds: [...s.organizations],
          organizationIds: [...s.adminOrganizations],
          projectIds: [...s.projects],
          shared: true,
        },
    {
      ...(q.organization_id ? { organizationId: q.organization_id } : {}),
      ...(q.project_id ? { projectId: q.project_id } : {}),
      ...(q.pool ? { pool: q.pool } : {}),
      ...(q.deleted ? { deletedAsOf: deps.clock.now() } : {}),
    },
    { limit: q.size, offset: (q.page - 1) * q.size },
  );
  const mine = rows;
  const crs = new Map<string, Volume>();
  if (mine.length > 0) {
    const list = await storageRuntimeOf(deps)
      .kube.json<{ items: unknown[] }>("GET", resourcePath(VolumeKind), {
        query: { labelSelector: `${LABELS.volumeId} in (${mine.map((r) => r.id).join(",")})` },
      })
      .catch(unreachable("listing volumes"));
    for (const i of list.items) {
      const r = VolumeKind.schema.safeParse(i);
      if (r.success) crs.set(r.data.metadata.name ?? "", r.data);
    }
  }
  return {
    views: await priced(
      deps,
      // A volume the caller sees only through a share says so (and how): the list marks it.
      mine.flatMap((row) => {
        const cr = crs.get(row.cr_name);
        // Listed through a share the resource no longer has (a write between the two): not the caller's.
        if (!ownsVolume(s, row) && sharedWith(s, cr).length === 0) return [];
        return [{ row, cr, ...sharedMark(s, row, cr) }];
      }),
    ),
    total,
  };
}

/**
 * The volumes a session mounts, each with its mount, for whoever may see the session (404 otherwise,
 * existence not revealed). A volume deleted since shows from its row alone.
 */
export async function volumesOfSession(deps: Deps, principal: Principal, sessionId: string): Promise<VolumeView[]> {
  const session = await findSessionById(deps.db, sessionId);
  if (!session || !canSeeSession(principal, session)) throw new NotFound("session", sessionId);
  const res = await storageRuntimeOf(deps)
    .kube.request<{ spec?: { volumes?: { volume: string; readOnly?: boolean; mountPath?: string }[] } }>(
      "GET",
      `${namespacedSessionsPath(session.namespace)}/${encodeURIComponent(session.cr_name)}`,
    )
    .catch(unreachable("reading a session"));
  if (res.status === 404) return [];
  if (res.status >= 300) throw new KubeError("GET", namespacedSessionsPath(session.namespace), res.status, res.body);
  const views: VolumeView[] = [];
  for (const m of res.body.spec?.volumes ?? []) {
    const row = (await deps.db("volumes").where({ cr_name: m.volume, namespace: session.namespace }).first()) as
      | VolumeRow
      | undefined;
    if (!row) continue;
    views.push({
      row,
      cr: row.deleted_at ? undefined : await readVolumeCr(deps, row),
      mounts: [{ session: session.cr_name, readOnly: m.readOnly ?? false, mountPath: m.mountPath ?? null }],
    });
  }
  return priced(deps, views);
}

export interface ShareInput {
  kind: "user" | "project";
  id: string;
  access: "read_only" | "read_write";
}

/**
 * Replaces the volume's shares. Each names a user with a membership in the volume's organization or a
 * project of it; anything else is refused naming the entry (nothing is written). A read-only share
 * mounts read-only (api/src/domain/sessions/createSession.ts).
 */
export async function setVolumeShares(
  deps: Deps,
  principal: Principal,
  id: string,
  shares: ShareInput[],
): Promise<VolumeView> {
  const { row } = await manageable(deps, principal, id);
  const issues: { path: (string | number)[]; message: string; code: string }[] = [];
  const seen = new Set<string>();
  for (const [i, s] of shares.entries()) {
    const key = `${s.kind}/${s.id}`;
    if (seen.has(key)) issues.push({ path: ["body", "shares", i], message: "named twice", code: "duplicate" });
    seen.add(key);
    if (s.kind === "user") {
      const ms = await listMembershipsOfUser(deps.db, s.id);
      if (!ms.some((m) => m.organization_id === row.organization_id))
        issues.push({
          path: ["body", "shares", i, "id"],
          message: "no such user in the volume's organization",
          code: "invalid_reference",
        });
    } else {
      const p = await findProjectById(deps.db, s.id);
      if (!p || p.organization_id !== row.organization_id)
        issues.push({
          path: ["body", "shares", i, "id"],
          message: "no such project in the volume's organization",
          code: "invalid_reference",
        });
    }
  }
  if (issues.length > 0) throw new Invalid("the request is invalid", issues);
  // The list's copy first, in a transaction committed only once the resource took the shares.
  const cr = await deps.db.transaction(async (trx) => {
    await replaceVolumeShares(
      trx,
      row.id,
      shares.map((s) => ({ subject_kind: s.kind, subject_id: s.id, access: s.access })),
    );
    return patchCr(deps, row, {
      shares: shares.map((s) => ({
        kind: s.kind,
        id: s.id,
        access: s.access === "read_write" ? "ReadWrite" : "ReadOnly",
      })),
    });
  });
  return priced(deps, { row, cr, mounts: await mountsOf(deps, row) });
}
