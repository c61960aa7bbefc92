// /api/v1/resource-policies: limits, idle rules and fair-share guarantees, checked against the fleet
// (domain/fairshare/guarantees.ts) before they are stored.
import type { ResourcePolicySpec } from "@berth/crds";
import { Paged, pageOf } from "../../db/paging.ts";
import { createCatalog, getCatalog, listCatalog, updateCatalog } from "../../domain/catalog/operations.ts";
import { policies } from "../../domain/catalog/resources.ts";
import { checkGuarantees } from "../../domain/fairshare/guarantees.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { fairShareToSpec, idleToSpec, limitsToSpec, presentPolicy } from "./presenter.ts";
import {
  CreateResourcePolicyBody,
  ListResourcePoliciesQuery,
  NameParams,
  ResourcePolicy,
  UpdateResourcePolicyBody,
} from "./schemas.ts";

export const listPoliciesRoute = defineRoute({
  method: "get",
  path: "/api/v1/resource-policies",
  operationId: "listResourcePolicies",
  tags: ["catalog"],
  summary: "Resource policies that apply to you (all, for super_admins)",
  description: "The global policy, your organizations' and your projects' policies.",
  auth: "user",
  query: ListResourcePoliciesQuery,
  responses: { 200: Paged(ResourcePolicy) },
  handler: async ({ deps, principal, query }) => {
    const items = await listCatalog(
      deps,
      principal,
      policies,
      (o) => query.scope === undefined || (o.spec.scope as { kind: string }).kind === query.scope,
    );
    return { status: 200, body: pageOf(items, query, presentPolicy) };
  },
});

export const getPolicyRoute = defineRoute({
  method: "get",
  path: "/api/v1/resource-policies/:name",
  operationId: "getResourcePolicy",
  tags: ["catalog"],
  summary: "A resource policy",
  auth: "user",
  params: NameParams,
  responses: { 200: ResourcePolicy },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentPolicy(await getCatalog(deps, principal, policies, params.name)),
  }),
});

export const createPolicyRoute = defineRoute({
  method: "post",
  path: "/api/v1/resource-policies",
  operationId: "createResourcePolicy",
  tags: ["catalog"],
  summary: "Create a resource policy (super_admin)",
  auth: "user",
  body: CreateResourcePolicyBody,
  idempotent: true,
  audit: "resource_policy.create",
  errors: ["already_exists", "conflict", "guarantee_unsatisfiable"],
  responses: { 201: ResourcePolicy },
  handler: async ({ deps, principal, body, audit }) => {
    audit.target("resource_policy", body.name);
    const spec = {
      scope: body.scope,
      limits: limitsToSpec(body.limits ?? {}),
      ...(body.idle ? { idle: idleToSpec(body.idle) } : {}),
      ...(body.fair_share ? { fairShare: fairShareToSpec(body.fair_share) } : {}),
      ...(body.allowed_offerings ? { allowedOfferings: body.allowed_offerings } : {}),
    };
    if (principal.isSuperAdmin) await checkGuarantees(deps, body.name, spec as ResourcePolicySpec);
    const o = await createCatalog(deps, principal, policies, body.name, spec);
    return { status: 201, body: presentPolicy(o) };
  },
});

export const updatePolicyRoute = defineRoute({
  method: "patch",
  path: "/api/v1/resource-policies/:name",
  operationId: "updateResourcePolicy",
  tags: ["catalog"],
  summary: "Change a resource policy's limits or allowed offerings (super_admin)",
  auth: "user",
  params: NameParams,
  body: UpdateResourcePolicyBody,
  audit: "resource_policy.update",
  errors: ["guarantee_unsatisfiable"],
  responses: { 200: ResourcePolicy },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("resource_policy", params.name);
    const change = (spec: Record<string, unknown>) => {
      const next = { ...spec };
      if (body.limits !== undefined) next.limits = limitsToSpec(body.limits);
      if (body.idle !== undefined) next.idle = idleToSpec(body.idle);
      if (body.fair_share !== undefined) next.fairShare = fairShareToSpec(body.fair_share);
      if (body.allowed_offerings === null) delete next.allowedOfferings;
      else if (body.allowed_offerings !== undefined) next.allowedOfferings = body.allowed_offerings;
      return next;
    };
    // Guarantees are checked against the fleet before the write (a change of guarantees only).
    if (principal.isSuperAdmin && body.fair_share?.guarantees) {
      const current = await getCatalog(deps, principal, policies, params.name);
      await checkGuarantees(deps, params.name, change(structuredClone(current.spec)) as ResourcePolicySpec);
    }
    const o = await updateCatalog(deps, principal, policies, params.name, change);
    return { status: 200, body: presentPolicy(o) };
  },
});

export const routes: RouteDef[] = [listPoliciesRoute, createPolicyRoute, getPolicyRoute, updatePolicyRoute];
