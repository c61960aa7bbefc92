// Node pools with grants (docs/dev/node-pools.md): a super_admin groups a cluster's nodes by one label
// requirement and grants the pool to organizations, projects or single users (a PI's own nodes). Nodes in
// no pool are open to every session; a pool's nodes only to its grantees' sessions (a pool without grants:
// to nobody). The worker's placement reads the pools with the inventory (the tables' triggers wake it) and
// every session's pod is kept off the pools not granted to it by a node affinity, so the kube-scheduler
// agrees.
import { randomBytes } from "node:crypto";
import type { Knex } from "knex";
import { findClusterById } from "../../db/operations/clusters/findClusterById.ts";
import {
  deleteGrantRow,
  deleteNodePoolRow,
  findNodePoolRow,
  grantsOfPools,
  insertGrantRow,
  insertNodePoolRow,
  listNodePoolRows,
  lockClusterPools,
  type NodePoolGrantRow,
  type NodePoolRow,
  updateNodePoolRow,
} from "../../db/operations/nodePools/nodePools.ts";
import type { Deps } from "../../deps.ts";
import { Conflict, DomainError, Forbidden, NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { notify } from "../notifications/notify.ts";
import { type LabelRequirement, matches, overlapOf, parseSelector } from "./selector.ts";

export interface NodePoolView {
  pool: NodePoolRow;
  /** `grantee_organization_name`: a project grant's organization (project names repeat across organizations). */
  grants: (NodePoolGrantRow & { grantee_name: string | null; grantee_organization_name: string | null })[];
  /** The cluster's nodes the selector picks now (from the inventory). */
  nodes: string[];
}

export interface NodePoolInput {
  name: string;
  selector: string;
  description?: string | undefined;
}

/** Exactly one of them (the route's schema checks it). */
export interface GrantInput {
  organization_id?: string | undefined;
  project_id?: string | undefined;
  user_id?: string | undefined;
}

const GRANTEE_TABLE = { organization: "organizations", project: "projects", user: "users" } as const;

function granteeOf(input: GrantInput): { kind: keyof typeof GRANTEE_TABLE; id: string } {
  if (input.organization_id !== undefined) return { kind: "organization", id: input.organization_id };
  if (input.project_id !== undefined) return { kind: "project", id: input.project_id };
  return { kind: "user", id: input.user_id as string };
}

function superAdminOnly(p: Principal, what: string) {
  if (!p.isSuperAdmin) throw new Forbidden(`only super_admins ${what}`);
}

function newPoolId(prefix: "npl" | "npg"): string {
  const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz";
  let s = "";
  for (const b of randomBytes(40)) if (b < 252 && s.length < 20) s += alphabet[b % 36];
  return `${prefix}_${s}`;
}

async function liveCluster(db: Knex, clusterId: string): Promise<void> {
  const c = await findClusterById(db, clusterId);
  if (!c || c.deregistered_at) throw new NotFound("cluster", clusterId);
}

async function clusterNodes(db: Knex, clusterId: string): Promise<{ name: string; labels: Record<string, string> }[]> {
  return db("cluster_nodes").where({ cluster_id: clusterId }).select("name", "labels").orderBy("name");
}

/**
 * Pools may not overlap: a node in two pools would need a rule for whose grant wins. Refused when another
 * pool of the cluster has the same label with a common value (they overlap on every such node, now and
 * later) or when a node reported now carries both pools' labels. A node labelled into two pools later is
 * usable only by sessions granted both (controllers/src/placement/constraints.ts, mayUseNode).
 */
async function checkOverlap(db: Knex, clusterId: string, r: LabelRequirement, except?: string): Promise<void> {
  const others = (await listNodePoolRows(db, clusterId)).filter((p) => p.id !== except);
  const nodes = await clusterNodes(db, clusterId);
  for (const o of others) {
    const meet = overlapOf(r, { key: o.label_key, values: o.label_values }, nodes);
    if (meet)
      throw new Conflict(
        `the pool would share nodes with pool ${o.name} (${o.id})`,
        { pool_id: o.id, pool_name: o.name, nodes: meet.nodes },
        "node_pool_overlap",
      );
  }
}

async function views(db: Knex, pools: NodePoolRow[]): Promise<NodePoolView[]> {
  const grants = await grantsOfPools(
    db,
    pools.map((p) => p.id),
  );
  const orgIds = grants.filter((g) => g.grantee_kind === "organization").map((g) => g.grantee_id);
  const prjIds = grants.filter((g) => g.grantee_kind === "project").map((g) => g.grantee_id);
  const names = new Map<string, string>();
  for (const r of (await db("organizations").whereIn("id", orgIds).select("id", "name")) as {
    id: string;
    name: string;
  }[])
    names.set(r.id, r.name);
  const projectOrgs = new Map<string, string>();
  for (const r of (await db("projects")
    .join("organizations", "organizations.id", "projects.organization_id")
    .whereIn("projects.id", prjIds)
    .select("projects.id", "projects.name", "organizations.name as organization_name")) as {
    id: string;
    name: string;
    organization_name: string;
  }[]) {
    names.set(r.id, r.name);
    projectOrgs.set(r.id, r.organization_name);
  }
  // A person by their email: what the console's picker asks for, and unique where display names are not.
  const userIds = grants.filter((g) => g.grantee_kind === "user").map((g) => g.grantee_id);
  for (const r of (await db("users").whereIn("id", userIds).select("id", "email")) as { id: string; email: string }[])
    names.set(r.id, r.email);
  const byCluster = new Map<string, { name: string; labels: Record<string, string> }[]>();
  for (const c of new Set(pools.map((p) => p.cluster_id))) byCluster.set(c, await clusterNodes(db, c));
  return pools.map((pool) => ({
    pool,
    grants: grants
      .filter((g) => g.pool_id === pool.id)
      .map((g) => ({
        ...g,
        grantee_name: names.get(g.grantee_id) ?? null,
        grantee_organization_name: projectOrgs.get(g.grantee_id) ?? null,
      })),
    nodes: (byCluster.get(pool.cluster_id) ?? [])
      .filter((n) => matches({ key: pool.label_key, values: pool.label_values }, n.labels))
      .map((n) => n.name),
  }));
}

/** A cluster's pools: super_admin's scope (anyone else gets none, as lists do). */
export async function listNodePools(deps: Deps, principal: Principal, clusterId: string): Promise<NodePoolView[]> {
  await liveCluster(deps.db, clusterId);
  if (!principal.isSuperAdmin) return [];
  return views(deps.db, await listNodePoolRows(deps.db, clusterId));
}

async function poolOf(db: Knex, clusterId: string, poolId: string): Promise<NodePoolRow> {
  const pool = await findNodePoolRow(db, poolId);
  if (!pool || pool.cluster_id !== clusterId) throw new NotFound("node pool", poolId);
  return pool;
}

export async function getNodePool(deps: Deps, p: Principal, clusterId: string, poolId: string): Promise<NodePoolView> {
  superAdminOnly(p, "read node pools");
  await liveCluster(deps.db, clusterId);
  return (await views(deps.db, [await poolOf(deps.db, clusterId, poolId)]))[0] as NodePoolView;
}

export async function createNodePool(
  deps: Deps,
  p: Principal,
  clusterId: string,
  input: NodePoolInput,
): Promise<NodePoolView> {
  superAdminOnly(p, "manage node pools");
  const r = parseSelector(input.selector);
  return deps.db.transaction(async (tx) => {
    await liveCluster(tx, clusterId);
    await lockClusterPools(tx, clusterId);
    if ((await listNodePoolRows(tx, clusterId)).some((x) => x.name === input.name))
      throw new Conflict(
        `a node pool named ${input.name} exists on ${clusterId}`,
        { name: input.name },
        "already_exists",
      );
    await checkOverlap(tx, clusterId, r);
    const pool = await insertNodePoolRow(tx, {
      id: newPoolId("npl"),
      cluster_id: clusterId,
      name: input.name,
      description: input.description ?? "",
      label_key: r.key,
      label_values: r.values,
      created_by: p.userId,
      created_at: deps.clock.now(),
    });
    return (await views(tx, [pool]))[0] as NodePoolView;
  });
}

export async function updateNodePool(
  deps: Deps,
  p: Principal,
  clusterId: string,
  poolId: string,
  patch: Partial<NodePoolInput>,
): Promise<{ before: NodePoolView; after: NodePoolView }> {
  superAdminOnly(p, "manage node pools");
  const r = patch.selector !== undefined ? parseSelector(patch.selector) : undefined;
  return deps.db.transaction(async (tx) => {
    await liveCluster(tx, clusterId);
    await lockClusterPools(tx, clusterId);
    const pool = await poolOf(tx, clusterId, poolId);
    const before = (await views(tx, [pool]))[0] as NodePoolView;
    if (patch.name !== undefined && patch.name !== pool.name)
      if ((await listNodePoolRows(tx, clusterId)).some((x) => x.name === patch.name))
        throw new Conflict(
          `a node pool named ${patch.name} exists on ${clusterId}`,
          { name: patch.name },
          "already_exists",
        );
    if (r) await checkOverlap(tx, clusterId, r, poolId);
    const row = await updateNodePoolRow(
      tx,
      poolId,
      {
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
        ...(r ? { label_key: r.key, label_values: r.values } : {}),
      },
      deps.clock.now(),
    );
    return { before, after: (await views(tx, [row as NodePoolRow]))[0] as NodePoolView };
  });
}

/** Deleting a pool opens its nodes to every session; nobody loses anything, so nobody is warned. */
export async function deleteNodePool(deps: Deps, p: Principal, clusterId: string, poolId: string): Promise<void> {
  superAdminOnly(p, "manage node pools");
  await liveCluster(deps.db, clusterId);
  await poolOf(deps.db, clusterId, poolId);
  await deleteNodePoolRow(deps.db, poolId);
}

export async function grantNodePool(
  deps: Deps,
  p: Principal,
  clusterId: string,
  poolId: string,
  input: GrantInput,
): Promise<NodePoolView> {
  superAdminOnly(p, "grant node pools");
  const { kind, id } = granteeOf(input);
  return deps.db.transaction(async (tx) => {
    await liveCluster(tx, clusterId);
    const pool = await poolOf(tx, clusterId, poolId);
    const exists = await tx(GRANTEE_TABLE[kind]).where({ id }).first("id");
    if (!exists) throw new DomainError("grantee_not_found", `no ${kind} ${id}`, { grantee: { kind, id } });
    await insertGrantRow(tx, {
      id: newPoolId("npg"),
      pool_id: poolId,
      grantee: { kind, id },
      created_by: p.userId,
      created_at: deps.clock.now(),
    });
    return (await views(tx, [pool]))[0] as NodePoolView;
  });
}

/**
 * Removing a grant stops new placements of the grantee's sessions on the pool's nodes at the worker's next
 * pass. Sessions already running there keep running (a pod is not moved by a change of affinity); their
 * owners are warned, once per session, so they can save work and move when it suits them.
 */
export async function revokeNodePoolGrant(
  deps: Deps,
  p: Principal,
  clusterId: string,
  poolId: string,
  grantId: string,
): Promise<{ view: NodePoolView; warned: string[] }> {
  superAdminOnly(p, "grant node pools");
  return deps.db.transaction(async (tx) => {
    await liveCluster(tx, clusterId);
    const pool = await poolOf(tx, clusterId, poolId);
    const grant = await deleteGrantRow(tx, poolId, grantId);
    if (!grant) throw new NotFound("node pool grant", grantId);
    const left = await grantsOfPools(tx, [poolId]);
    const granted = (owner: string, org: string, project: string | null) =>
      left.some(
        (g) =>
          (g.grantee_kind === "organization" && g.grantee_id === org) ||
          (project !== null && g.grantee_kind === "project" && g.grantee_id === project) ||
          (g.grantee_kind === "user" && g.grantee_id === owner),
      );
    const nodes = (await clusterNodes(tx, clusterId))
      .filter((n) => matches({ key: pool.label_key, values: pool.label_values }, n.labels))
      .map((n) => n.name);
    const sessions = (await tx("sessions")
      .where({ cluster_id: clusterId })
      .whereIn("node", nodes)
      .whereIn("phase", ["Starting", "Running", "Restarting", "Resuming", "Unknown"])
      .select("id", "owner_id", "organization_id", "project_id", "display_name", "node")) as {
      id: string;
      owner_id: string;
      organization_id: string;
      project_id: string | null;
      display_name: string | null;
      node: string;
    }[];
    const affected = sessions.filter((s) => !granted(s.owner_id, s.organization_id, s.project_id));
    const at = deps.clock.now();
    await notify(
      tx,
      affected.map((s) => ({
        userId: s.owner_id,
        organizationId: s.organization_id,
        kind: "session.node_pool_revoked" as const,
        title: `${s.display_name ?? s.id} runs on a node pool no longer granted to you`,
        body: `Node pool ${pool.name} on node ${s.node} is no longer granted to you, your organization or your project. The session keeps running, but once it is paused or restarted it will be placed on other nodes. Save your work.`,
        data: { session_id: s.id, pool_id: pool.id, node: s.node, cluster_id: clusterId },
        dedupeKey: `session.node_pool_revoked:${s.id}:${pool.id}`,
        at,
      })),
    );
    return { view: (await views(tx, [pool]))[0] as NodePoolView, warned: affected.map((s) => s.id) };
  });
}
