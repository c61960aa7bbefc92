// Storage pools (super_admin): the Pool resource in the management cluster is the source of truth; this
// reads and writes it, and adds from Postgres what lives there (the pool's volumes and their sizes).

import { KubeError } from "@berth/controllers/kube";
import { type Pool, PoolKind, PoolSpec } from "@berth/crds";
import type { Knex } from "knex";
import { findClusterById } from "../../db/operations/clusters/findClusterById.ts";
import { lockPoolVolumes, provisionedByPool } from "../../db/operations/volumes/provisioned.ts";
import { lastStorageReports } from "../../db/operations/volumes/storageReports.ts";
import type { Deps } from "../../deps.ts";
import { Conflict, Forbidden, Invalid, NotFound, Unavailable, type ValidationIssue } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { type CapacityContext, capacityOf, type PoolCapacity } from "./capacity.ts";
import { poolPath, requestPatiently, storageRuntimeOf, unreachable } from "./runtime.ts";
import { storageSettings } from "./settings.ts";

export interface PoolView {
  pool: Pool;
  capacity: PoolCapacity | null;
  volumes: number;
}

export interface PoolInput {
  name: string;
  display_name?: string | undefined;
  cluster: string;
  storage_class: string;
  sharing?: "all" | "selected" | undefined;
  clusters?: string[] | undefined;
  manual_capacity_gb?: number | undefined;
  default?: boolean | undefined;
}

export type PoolPatch = Partial<Omit<PoolInput, "name" | "manual_capacity_gb" | "display_name">> & {
  manual_capacity_gb?: number | null | undefined;
  display_name?: string | null | undefined;
};

const FIELD_MANAGER = "berth-api";

function superAdminOnly(p: Principal) {
  if (!p.isSuperAdmin) throw new Forbidden("only super_admins manage storage pools");
}

/** Every pool, parsed; what does not parse (edited by hand into nonsense) is left out. */
export async function readPools(deps: Deps): Promise<Pool[]> {
  const res = await requestPatiently<{ items: unknown[] }>(storageRuntimeOf(deps).kube, "GET", poolPath()).catch(
    unreachable("listing pools"),
  );
  if (res.status >= 300) throw new Unavailable(`listing pools failed (${res.status})`);
  return res.body.items
    .flatMap((i) => {
      const r = PoolKind.schema.safeParse(i);
      return r.success ? [r.data] : [];
    })
    .sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""));
}

export async function readPool(deps: Deps, name: string): Promise<Pool | undefined> {
  const res = await requestPatiently(storageRuntimeOf(deps).kube, "GET", poolPath(name)).catch(
    unreachable("reading a pool"),
  );
  if (res.status === 404) return undefined;
  if (res.status >= 300) throw new KubeError("GET", poolPath(name), res.status, res.body);
  return PoolKind.schema.parse(res.body);
}

/** What capacityOf needs besides the pool: the fleet default and each cluster's last report. */
export async function capacityContext(deps: Deps, db: Knex = deps.db) {
  const [settings, reports] = await Promise.all([storageSettings(db), lastStorageReports(db)]);
  const now = deps.clock.now();
  return (pool: Pool): CapacityContext => ({
    fleetDefaultGb: settings.fleet_capacity_gb,
    lastReport: reports.get(pool.spec.cluster),
    now,
  });
}

export async function poolViews(deps: Deps, pools?: Pool[]): Promise<PoolView[]> {
  const [all, used, ctx] = await Promise.all([
    pools ?? readPools(deps),
    provisionedByPool(deps.db, deps.clock.now()),
    capacityContext(deps),
  ]);
  return all.map((pool) => {
    const u = used.get(pool.metadata.name ?? "") ?? { gb: 0, volumes: 0 };
    return { pool, capacity: capacityOf(pool, u.gb, ctx(pool)), volumes: u.volumes };
  });
}

export async function listPools(deps: Deps, principal: Principal): Promise<PoolView[]> {
  superAdminOnly(principal);
  return poolViews(deps);
}

export async function getPool(deps: Deps, principal: Principal, name: string): Promise<PoolView> {
  superAdminOnly(principal);
  const pool = await readPool(deps, name);
  if (!pool) throw new NotFound("pool", name);
  return (await poolViews(deps, [pool]))[0] as PoolView;
}

/** The clusters a pool names must be registered (and not deregistered). */
async function checkClusters(deps: Deps, cluster: string | undefined, clusters: string[] | undefined) {
  const issues: ValidationIssue[] = [];
  const known = async (id: string) => {
    const row = await findClusterById(deps.db, id);
    return row !== undefined && !row.deregistered_at;
  };
  if (cluster !== undefined && !(await known(cluster)))
    issues.push({ path: ["body", "cluster"], message: "no such cluster", code: "invalid_reference" });
  for (const [i, c] of (clusters ?? []).entries())
    if (!(await known(c)))
      issues.push({ path: ["body", "clusters", i], message: "no such cluster", code: "invalid_reference" });
  if (issues.length > 0) throw new Invalid("the request is invalid", issues);
}

/** Only one pool is the default: the others lose the mark. */
async function clearOtherDefaults(deps: Deps, keep: string) {
  const kube = storageRuntimeOf(deps).kube;
  for (const p of await readPools(deps)) {
    if (p.metadata.name === keep || !p.spec.default) continue;
    await kube
      .json("PATCH", poolPath(p.metadata.name), { body: { spec: { default: false } } })
      .catch(unreachable("updating a pool"));
  }
}

export async function createPool(deps: Deps, principal: Principal, input: PoolInput): Promise<PoolView> {
  superAdminOnly(principal);
  await checkClusters(deps, input.cluster, input.clusters);
  const existing = await readPools(deps);
  // The first pool of an install is its default unless told otherwise (single-pool installs name none).
  const isDefault = input.default ?? existing.length === 0;
  const pool = PoolKind.build(
    { name: input.name, labels: { "app.kubernetes.io/part-of": "berth" } },
    {
      cluster: input.cluster,
      storageClass: input.storage_class,
      sharing: input.sharing ?? "all",
      default: isDefault,
      ...(input.display_name ? { displayName: input.display_name } : {}),
      ...(input.clusters ? { clusters: input.clusters } : {}),
      ...(input.manual_capacity_gb !== undefined ? { manualCapacityGb: input.manual_capacity_gb } : {}),
    },
  );
  const res = await storageRuntimeOf(deps)
    .kube.request("POST", poolPath(), { body: pool, query: { fieldManager: FIELD_MANAGER } })
    .catch(unreachable("creating a pool"));
  if (res.status === 409)
    throw new Conflict(`a pool named ${input.name} exists`, { name: input.name }, "already_exists");
  if (res.status >= 300) throw new KubeError("POST", poolPath(), res.status, res.body);
  if (isDefault) await clearOtherDefaults(deps, input.name);
  return (await poolViews(deps, [PoolKind.schema.parse(res.body)]))[0] as PoolView;
}

export async function updatePool(deps: Deps, principal: Principal, name: string, patch: PoolPatch): Promise<PoolView> {
  superAdminOnly(principal);
  const current = await readPool(deps, name);
  if (!current) throw new NotFound("pool", name);
  await checkClusters(deps, patch.cluster, patch.clusters);
  const moves =
    (patch.cluster !== undefined && patch.cluster !== current.spec.cluster) ||
    (patch.storage_class !== undefined && patch.storage_class !== current.spec.storageClass);
  if (moves) {
    const used = (await provisionedByPool(deps.db, deps.clock.now())).get(name);
    if (used && used.volumes > 0)
      throw new Conflict(
        `pool ${name} holds ${used.volumes} volume(s): its cluster and storage class cannot change`,
        { pool: name, volumes: used.volumes },
        "pool_in_use",
      );
  }
  const spec: Record<string, unknown> = {
    ...(patch.cluster !== undefined ? { cluster: patch.cluster } : {}),
    ...(patch.storage_class !== undefined ? { storageClass: patch.storage_class } : {}),
    ...(patch.sharing !== undefined ? { sharing: patch.sharing } : {}),
    ...(patch.clusters !== undefined ? { clusters: patch.clusters } : {}),
    ...(patch.manual_capacity_gb !== undefined ? { manualCapacityGb: patch.manual_capacity_gb } : {}),
    ...(patch.display_name !== undefined ? { displayName: patch.display_name } : {}),
    ...(patch.default !== undefined ? { default: patch.default } : {}),
  };
  // The merged spec must still hold (sharing `selected` needs clusters); say so as a bad request.
  const merged = PoolSpec.safeParse({
    ...current.spec,
    ...Object.fromEntries(Object.entries(spec).filter(([, v]) => v !== null)),
  });
  if (!merged.success)
    throw new Invalid("the request is invalid", [
      { path: ["body", "clusters"], message: merged.error.issues[0]?.message ?? "invalid", code: "custom" },
    ]);
  const res = await storageRuntimeOf(deps)
    .kube.request("PATCH", poolPath(name), { body: { spec } })
    .catch(unreachable("updating a pool"));
  if (res.status === 404) throw new NotFound("pool", name);
  if (res.status >= 300) throw new KubeError("PATCH", poolPath(name), res.status, res.body);
  if (patch.default) await clearOtherDefaults(deps, name);
  return (await poolViews(deps, [PoolKind.schema.parse(res.body)]))[0] as PoolView;
}

export async function deletePool(deps: Deps, principal: Principal, name: string): Promise<void> {
  superAdminOnly(principal);
  const current = await readPool(deps, name);
  if (!current) throw new NotFound("pool", name);
  // Under the pool's lock: a volume created meanwhile either is counted here or finds no pool.
  await deps.db.transaction(async (tx) => {
    await lockPoolVolumes(tx, name);
    const used = (await provisionedByPool(tx, deps.clock.now())).get(name);
    if (used && used.volumes > 0)
      throw new Conflict(
        `pool ${name} holds ${used.volumes} volume(s); delete them first`,
        { pool: name, volumes: used.volumes },
        "pool_in_use",
      );
    const res = await storageRuntimeOf(deps)
      .kube.request("DELETE", poolPath(name))
      .catch(unreachable("deleting a pool"));
    if (res.status >= 300 && res.status !== 404) throw new KubeError("DELETE", poolPath(name), res.status, res.body);
  });
}
