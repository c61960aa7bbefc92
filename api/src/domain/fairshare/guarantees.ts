// A resource policy's guarantees are checked against the whole fleet before it is written (docs/dev/
// fair-share.md): the pure core's checks (controllers/src/fairshare/shares.ts) over the share tree the
// policies would make with this one in place, and the fleet's allocatable GPUs of each model now.
import { checkSatisfiable, checkShareTree, type SatisfiabilityReport } from "@berth/controllers";
import { type ResourcePolicy, ResourcePolicyKind, type ResourcePolicySpec } from "@berth/crds";
import { inventoryByClusterModel } from "../../db/operations/sessions/fleetModels.ts";
import type { Deps } from "../../deps.ts";
import { DomainError, Invalid } from "../../errors.ts";
import { catalogClient, listObjects } from "../catalog/store.ts";
import { shareTreeOf } from "./tree.ts";

/** Allocatable GPUs per model on ready, schedulable nodes of registered clusters. */
export async function fleetGpus(deps: Pick<Deps, "db">): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const r of await inventoryByClusterModel(deps.db)) out[r.gpu_model] = (out[r.gpu_model] ?? 0) + r.allocatable;
  return out;
}

export async function projectOrganizations(deps: Pick<Deps, "db">): Promise<Map<string, string>> {
  const rows = (await deps.db("projects").select("id", "organization_id")) as { id: string; organization_id: string }[];
  return new Map(rows.map((r) => [r.id, r.organization_id]));
}

/**
 * Refuses a policy whose guarantees cannot hold: a project's carved out beyond its organization's (400
 * `validation_failed` naming the field), or organizations' guarantees of a model this policy guarantees
 * adding up to more than the fleet has (422 `guarantee_unsatisfiable`, the arithmetic in the message).
 */
export async function checkGuarantees(
  deps: Pick<Deps, "db" | "kube">,
  name: string,
  spec: ResourcePolicySpec,
): Promise<void> {
  const guaranteed = (spec.fairShare?.guarantees ?? []).filter((g) => g.gpus > 0).map((g) => g.gpuModel);
  if (guaranteed.length === 0) return;
  const kind = spec.scope.kind;
  if (kind !== "organization" && kind !== "project")
    throw new Invalid("the resource policy is invalid", [
      {
        path: ["body", "fair_share", "guarantees"],
        message: "guarantees belong to an organization or a project",
        code: "invalid_scope",
      },
    ]);
  const others = (
    (await listObjects(catalogClient(deps.kube), ResourcePolicyKind as never)) as ResourcePolicy[]
  ).filter((p) => p.metadata.name !== name);
  const policies = [...others, { metadata: { name }, spec } as ResourcePolicy];
  const projectOrgs = await projectOrganizations(deps);
  const tree = shareTreeOf(policies, projectOrgs);
  const mine = kind === "organization" ? spec.scope.id : projectOrgs.get(spec.scope.id ?? "");
  const orgIndex = tree.orgs.findIndex((o) => o.org === mine);
  const carved = checkShareTree(tree).filter((i) => i.field === `orgs[${orgIndex}].projects`);
  if (carved.length > 0)
    throw new Invalid(
      "the resource policy is invalid",
      carved.map((i) => ({
        path: ["body", "fair_share", "guarantees"],
        message: i.message,
        code: "over_organization",
      })),
    );
  const report: SatisfiabilityReport = checkSatisfiable(tree, await fleetGpus(deps));
  const bad = report.models.filter((m) => !m.ok && guaranteed.includes(m.gpuModel));
  if (bad.length > 0)
    throw new DomainError(
      "guarantee_unsatisfiable",
      `guarantees exceed the fleet: ${bad.map((m) => m.arithmetic).join("; ")}`,
      {
        models: bad.map((m) => ({ gpu_model: m.gpuModel, guaranteed: m.guaranteed, capacity: m.capacity })),
      },
    );
}
