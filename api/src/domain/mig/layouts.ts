// MIG layouts (docs/dev/gpu-sharing.md): a super_admin marks a cluster's nodes of one model, chosen by one
// label requirement, as partitioned into these instances per card. Berth does not partition cards (NVIDIA's
// MIG manager does, from its own node label); the mark says which profiles Berth offers there, and it is
// checked against the card so a layout that cannot exist is refused. What a node advertises stays the
// truth placement counts: a marked node offers the layout's profiles it advertises, no more.
import { randomBytes } from "node:crypto";
import { checkMigLayout, MIG_PROFILE_NAMES } from "@berth/crds";
import type { Knex } from "knex";
import { findClusterById } from "../../db/operations/clusters/findClusterById.ts";
import {
  deleteMigLayoutRow,
  insertMigLayoutRow,
  listMigLayoutRows,
  lockClusterMigLayouts,
  type MigLayoutRow,
} from "../../db/operations/mig/migLayouts.ts";
import type { Deps } from "../../deps.ts";
import { Conflict, DomainError, Forbidden, NotFound } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { formatSelector, type LabelRequirement, matches, overlapOf, parseSelector } from "../nodePools/selector.ts";

export interface MigLayoutInput {
  selector: string;
  gpu_model: string;
  /** Instances per card, by profile. */
  profiles: Record<string, number>;
}

export interface MigLayoutView {
  layout: MigLayoutRow;
  /** The cluster's nodes of the model the selector picks now, with the profiles each advertises. */
  nodes: { name: string; advertised: Record<string, number> }[];
}

function superAdminOnly(p: Principal) {
  if (!p.isSuperAdmin) throw new Forbidden("only super_admins mark nodes as MIG-partitioned");
}

async function liveCluster(deps: Deps, clusterId: string): Promise<void> {
  const c = await findClusterById(deps.db, clusterId);
  if (!c || c.deregistered_at) throw new NotFound("cluster", clusterId);
}

function newLayoutId(): string {
  const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz";
  let s = "";
  for (const b of randomBytes(40)) if (b < 252 && s.length < 20) s += alphabet[b % 36];
  return `mig_${s}`;
}

/** A layout that cannot exist on the card, with its stable code. */
export function checkLayout(gpuModel: string, profiles: Record<string, number>): void {
  const problem = checkMigLayout(gpuModel, profiles);
  if (!problem) return;
  switch (problem.code) {
    case "mig_profile_unknown":
      throw new DomainError("mig_profile_unknown", `no GPU has a MIG profile ${JSON.stringify(problem.profile)}`, {
        mig_profile: problem.profile,
        allowed: MIG_PROFILE_NAMES,
      });
    case "mig_profile_not_for_model":
      throw new DomainError(
        "mig_profile_not_for_model",
        problem.allowed.length > 0
          ? `${gpuModel} has no MIG profile ${problem.profile}; it has ${problem.allowed.join(", ")}`
          : `${gpuModel} has no MIG profiles`,
        { mig_profile: problem.profile, gpu_model: gpuModel, allowed: problem.allowed },
      );
    case "mig_layout_overfilled":
      throw new DomainError(
        "mig_layout_overfilled",
        problem.profile
          ? `one card holds at most ${problem.maxPerCard} × ${problem.profile}`
          : `the layout takes ${problem.computeSlices} of 7 compute and ${problem.memorySlices} of 8 memory slices of one card`,
        {
          gpu_model: gpuModel,
          compute_slices: problem.computeSlices,
          memory_slices: problem.memorySlices,
          max_compute_slices: 7,
          max_memory_slices: 8,
          ...(problem.profile ? { mig_profile: problem.profile, max_per_card: problem.maxPerCard } : {}),
        },
      );
  }
}

async function views(deps: Deps, clusterId: string, rows: MigLayoutRow[]): Promise<MigLayoutView[]> {
  if (rows.length === 0) return [];
  const nodes = (await deps
    .db("cluster_nodes")
    .where({ cluster_id: clusterId })
    .select("name", "gpu_model", "labels", "mig")
    .orderBy("name")) as {
    name: string;
    gpu_model: string | null;
    labels: Record<string, string>;
    mig: Record<string, { allocatable: number }> | null;
  }[];
  return rows.map((layout) => ({
    layout,
    nodes: nodes
      .filter(
        (n) =>
          n.gpu_model === layout.gpu_model &&
          matches({ key: layout.label_key, values: layout.label_values }, n.labels ?? {}),
      )
      .map((n) => ({
        name: n.name,
        advertised: Object.fromEntries(Object.entries(n.mig ?? {}).map(([k, v]) => [k, v.allocatable])),
      })),
  }));
}

export async function listMigLayouts(deps: Deps, p: Principal, clusterId: string): Promise<MigLayoutView[]> {
  await liveCluster(deps, clusterId);
  if (!p.isSuperAdmin) return [];
  return views(deps, clusterId, await listMigLayoutRows(deps.db, clusterId));
}

/**
 * Layouts of one model may not overlap: a node marked twice would offer the union of two partitions, which
 * no card has. Refused when another layout of the model has the same label with a common value (they meet
 * on every such node, now and later) or a node of the model reported now carries both labels. Layouts of
 * different models never meet (a node has one model).
 */
async function checkOverlap(db: Knex, clusterId: string, gpuModel: string, r: LabelRequirement): Promise<void> {
  const others = (await listMigLayoutRows(db, clusterId)).filter((l) => l.gpu_model === gpuModel);
  if (others.length === 0) return;
  const nodes = (await db("cluster_nodes")
    .where({ cluster_id: clusterId, gpu_model: gpuModel })
    .select("name", "labels")
    .orderBy("name")) as { name: string; labels: Record<string, string> | null }[];
  for (const o of others) {
    const other = { key: o.label_key, values: o.label_values };
    const meet = overlapOf(r, other, nodes);
    if (meet)
      throw new Conflict(
        `the layout ${formatSelector(other)} already marks ${gpuModel} nodes this one would${meet.nodes.length > 0 ? ` (${meet.nodes.join(", ")})` : ""}; remove it first, or mark other nodes`,
        { layout_id: o.id, gpu_model: gpuModel, nodes: meet.nodes },
        "mig_layout_overlap",
      );
  }
}

export async function createMigLayout(
  deps: Deps,
  p: Principal,
  clusterId: string,
  input: MigLayoutInput,
): Promise<MigLayoutView> {
  superAdminOnly(p);
  await liveCluster(deps, clusterId);
  const label = parseSelector(input.selector);
  checkLayout(input.gpu_model, input.profiles);
  const row = await deps.db.transaction(async (tx) => {
    await lockClusterMigLayouts(tx, clusterId);
    await checkOverlap(tx, clusterId, input.gpu_model, label);
    return insertMigLayoutRow(tx, {
      id: newLayoutId(),
      cluster_id: clusterId,
      gpu_model: input.gpu_model,
      label_key: label.key,
      label_values: label.values,
      profiles: input.profiles,
      created_by: p.userId,
      created_at: deps.clock.now(),
    });
  });
  return (await views(deps, clusterId, [row]))[0] as MigLayoutView;
}

export async function deleteMigLayout(deps: Deps, p: Principal, clusterId: string, id: string): Promise<void> {
  superAdminOnly(p);
  await liveCluster(deps, clusterId);
  if ((await deleteMigLayoutRow(deps.db, clusterId, id)) === 0) throw new NotFound("MIG layout", id);
}
