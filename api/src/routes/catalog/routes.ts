// The catalog: offerings, resource presets, images and resource policies, stored as berth.dev custom
// resources in the management cluster. Everyone signed in reads what they may see (see
// domain/catalog/resources.ts); super_admins create and change. Lists are paged in memory (catalogs
// are small); names are the objects' Kubernetes names.

import type { ResourcePolicySpec } from "@berth/crds";
import { Paged, pageOf } from "../../db/paging.ts";
import { checkFraction, checkMigOffering, parseFraction } from "../../domain/catalog/gpuFraction.ts";
import { checkImageOwner } from "../../domain/catalog/imageOwner.ts";
import { createCatalog, getCatalog, listCatalog, updateCatalog } from "../../domain/catalog/operations.ts";
import { images, offerings, policies, presets } from "../../domain/catalog/resources.ts";
import { checkGuarantees } from "../../domain/fairshare/guarantees.ts";
import { assertSigned } from "../../domain/images/trust.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import {
  fairShareToSpec,
  idleToSpec,
  limitsToSpec,
  presentImage,
  presentOffering,
  presentPolicy,
  presentPreset,
} from "./presenter.ts";
import {
  CreateImageBody,
  CreateOfferingBody,
  CreateResourcePolicyBody,
  CreateResourcePresetBody,
  Image,
  ListImagesQuery,
  ListOfferingsQuery,
  ListResourcePoliciesQuery,
  ListResourcePresetsQuery,
  NameParams,
  Offering,
  ResourcePolicy,
  ResourcePreset,
  UpdateImageBody,
  UpdateOfferingBody,
  UpdateResourcePolicyBody,
  UpdateResourcePresetBody,
} from "./schemas.ts";

/** Copies the fields that are present, renamed from the wire's snake_case to the spec's camelCase. */
function toSpec(body: Record<string, unknown>, names: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [wire, spec] of Object.entries(names)) if (body[wire] !== undefined) out[spec] = body[wire];
  return out;
}

/** The wire's fraction ("1/4") as the spec's slicesPerCard; "1" (whole cards) is a removal, done by the caller. */
function fractionSpec(fraction: string | undefined): { slicesPerCard?: number } {
  if (fraction === undefined) return {};
  const n = parseFraction(fraction);
  return n === undefined ? {} : { slicesPerCard: n };
}

const OFFERING_FIELDS = {
  display_name: "displayName",
  gpu_model: "gpuModel",
  tier: "tier",
  mig_profile: "migProfile",
  gpu_count: "gpuCount",
  gpu_memory_mib: "gpuMemoryMib",
  hourly_credit_rate: "hourlyCreditRate",
  description: "description",
  enabled: "enabled",
};

/** The wire's multiplier (0.3) as the spec's thousandths (300); 1 is the full rate, stored as absent. */
function multiplierSpec(m: number | undefined): { borrowedRatePermille?: number } {
  if (m === undefined || m === 1) return {};
  return { borrowedRatePermille: Math.round(m * 1000) };
}
const PRESET_FIELDS = {
  display_name: "displayName",
  kind: "kind",
  cpu: "cpu",
  memory: "memory",
  gpu_count: "gpuCount",
};
const IMAGE_FIELDS = {
  display_name: "displayName",
  image: "image",
  kind: "kind",
  visibility: "visibility",
  owner: "owner",
  description: "description",
};

// --- offerings ------------------------------------------------------------------------------------------

export const listOfferingsRoute = defineRoute({
  method: "get",
  path: "/api/v1/offerings",
  operationId: "listOfferings",
  tags: ["catalog"],
  summary: "GPU offerings with their hourly credit rates",
  description: "Enabled offerings; super_admins also see disabled ones.",
  auth: "user",
  query: ListOfferingsQuery,
  responses: { 200: Paged(Offering) },
  handler: async ({ deps, principal, query }) => ({
    status: 200,
    body: pageOf(await listCatalog(deps, principal, offerings), query, presentOffering),
  }),
});

export const getOfferingRoute = defineRoute({
  method: "get",
  path: "/api/v1/offerings/:name",
  operationId: "getOffering",
  tags: ["catalog"],
  summary: "An offering",
  auth: "user",
  params: NameParams,
  responses: { 200: Offering },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentOffering(await getCatalog(deps, principal, offerings, params.name)),
  }),
});

export const createOfferingRoute = defineRoute({
  method: "post",
  path: "/api/v1/offerings",
  operationId: "createOffering",
  tags: ["catalog"],
  summary: "Create an offering (super_admin)",
  auth: "user",
  body: CreateOfferingBody,
  idempotent: true,
  audit: "offering.create",
  errors: ["already_exists", "conflict", "mig_profile_unknown", "mig_profile_not_for_model"],
  responses: { 201: Offering },
  handler: async ({ deps, principal, body, audit }) => {
    audit.target("offering", body.name);
    const spec: Record<string, unknown> = {
      ...toSpec(body, OFFERING_FIELDS),
      ...fractionSpec(body.fraction),
      ...multiplierSpec(body.borrowed_rate_multiplier),
    };
    // The document allows null ("memory not stated"), as PATCH reads it: the spec leaves the field out.
    if (body.gpu_memory_mib === null) delete spec.gpuMemoryMib;
    if (body.mig_profile === null) delete spec.migProfile;
    checkFraction(spec);
    checkMigOffering(spec);
    const o = await createCatalog(deps, principal, offerings, body.name, spec);
    return { status: 201, body: presentOffering(o) };
  },
});

export const updateOfferingRoute = defineRoute({
  method: "patch",
  path: "/api/v1/offerings/:name",
  operationId: "updateOffering",
  tags: ["catalog"],
  summary: "Change an offering (super_admin); the change survives restarts",
  auth: "user",
  params: NameParams,
  body: UpdateOfferingBody,
  audit: "offering.update",
  responses: { 200: Offering },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("offering", params.name);
    const o = await updateCatalog(deps, principal, offerings, params.name, (spec) => {
      const next: Record<string, unknown> = {
        ...spec,
        ...toSpec(body, OFFERING_FIELDS),
        ...fractionSpec(body.fraction),
        ...multiplierSpec(body.borrowed_rate_multiplier),
      };
      if (body.fraction === "1") delete next.slicesPerCard;
      if (body.borrowed_rate_multiplier === 1) delete next.borrowedRatePermille;
      if (body.gpu_memory_mib === null) delete next.gpuMemoryMib;
      if (body.mig_profile === null) delete next.migProfile;
      checkFraction(next);
      checkMigOffering(next);
      return next;
    });
    return { status: 200, body: presentOffering(o) };
  },
});

// --- resource presets -----------------------------------------------------------------------------------

export const listPresetsRoute = defineRoute({
  method: "get",
  path: "/api/v1/resource-presets",
  operationId: "listResourcePresets",
  tags: ["catalog"],
  summary: "Compute and GPU presets (CPU, memory, GPU count)",
  auth: "user",
  query: ListResourcePresetsQuery,
  responses: { 200: Paged(ResourcePreset) },
  handler: async ({ deps, principal, query }) => {
    const items = await listCatalog(
      deps,
      principal,
      presets,
      (o) => query.kind === undefined || o.spec.kind === query.kind,
    );
    return { status: 200, body: pageOf(items, query, presentPreset) };
  },
});

export const getPresetRoute = defineRoute({
  method: "get",
  path: "/api/v1/resource-presets/:name",
  operationId: "getResourcePreset",
  tags: ["catalog"],
  summary: "A resource preset",
  auth: "user",
  params: NameParams,
  responses: { 200: ResourcePreset },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentPreset(await getCatalog(deps, principal, presets, params.name)),
  }),
});

export const createPresetRoute = defineRoute({
  method: "post",
  path: "/api/v1/resource-presets",
  operationId: "createResourcePreset",
  tags: ["catalog"],
  summary: "Create a resource preset (super_admin)",
  auth: "user",
  body: CreateResourcePresetBody,
  idempotent: true,
  audit: "resource_preset.create",
  errors: ["already_exists", "conflict"],
  responses: { 201: ResourcePreset },
  handler: async ({ deps, principal, body, audit }) => {
    audit.target("resource_preset", body.name);
    const o = await createCatalog(deps, principal, presets, body.name, toSpec(body, PRESET_FIELDS));
    return { status: 201, body: presentPreset(o) };
  },
});

export const updatePresetRoute = defineRoute({
  method: "patch",
  path: "/api/v1/resource-presets/:name",
  operationId: "updateResourcePreset",
  tags: ["catalog"],
  summary: "Change a resource preset (super_admin)",
  auth: "user",
  params: NameParams,
  body: UpdateResourcePresetBody,
  audit: "resource_preset.update",
  responses: { 200: ResourcePreset },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("resource_preset", params.name);
    const o = await updateCatalog(deps, principal, presets, params.name, (spec) => ({
      ...spec,
      ...toSpec(body, PRESET_FIELDS),
    }));
    return { status: 200, body: presentPreset(o) };
  },
});

// --- images ---------------------------------------------------------------------------------------------

export const listImagesRoute = defineRoute({
  method: "get",
  path: "/api/v1/images",
  operationId: "listImages",
  tags: ["catalog"],
  summary: "Session images: the public base images and your private ones",
  auth: "user",
  query: ListImagesQuery,
  responses: { 200: Paged(Image) },
  handler: async ({ deps, principal, query }) => {
    const items = await listCatalog(
      deps,
      principal,
      images,
      (o) => query.kind === undefined || o.spec.kind === query.kind,
    );
    return { status: 200, body: pageOf(items, query, presentImage) };
  },
});

export const getImageRoute = defineRoute({
  method: "get",
  path: "/api/v1/images/:name",
  operationId: "getImage",
  tags: ["catalog"],
  summary: "An image",
  auth: "user",
  params: NameParams,
  responses: { 200: Image },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentImage(await getCatalog(deps, principal, images, params.name)),
  }),
});

export const createImageRoute = defineRoute({
  method: "post",
  path: "/api/v1/images",
  operationId: "createImage",
  tags: ["catalog"],
  summary: "Add an image to the catalog (super_admin)",
  description: "Members add private images with POST /api/v1/images/import and /api/v1/image-builds.",
  auth: "user",
  body: CreateImageBody,
  idempotent: true,
  audit: "image.create",
  errors: ["already_exists", "conflict", "image_unsigned"],
  responses: { 201: Image },
  handler: async ({ deps, principal, body, audit }) => {
    audit.target("image", body.name);
    await checkImageOwner(deps, principal, body.owner);
    if (principal.isSuperAdmin) await assertSigned(deps, body.image, "image");
    const o = await createCatalog(deps, principal, images, body.name, toSpec(body, IMAGE_FIELDS));
    return { status: 201, body: presentImage(o) };
  },
});

export const updateImageRoute = defineRoute({
  method: "patch",
  path: "/api/v1/images/:name",
  operationId: "updateImage",
  tags: ["catalog"],
  summary: "Change an image (super_admin)",
  auth: "user",
  params: NameParams,
  body: UpdateImageBody,
  audit: "image.update",
  errors: ["image_unsigned"],
  responses: { 200: Image },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("image", params.name);
    await checkImageOwner(deps, principal, body.owner);
    if (principal.isSuperAdmin && body.image !== undefined) await assertSigned(deps, body.image, "image");
    const o = await updateCatalog(deps, principal, images, params.name, (spec) => ({
      ...spec,
      ...toSpec(body, IMAGE_FIELDS),
    }));
    return { status: 200, body: presentImage(o) };
  },
});

// --- resource policies ----------------------------------------------------------------------------------

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

export const routes: RouteDef[] = [
  listOfferingsRoute,
  createOfferingRoute,
  getOfferingRoute,
  updateOfferingRoute,
  listPresetsRoute,
  createPresetRoute,
  getPresetRoute,
  updatePresetRoute,
  listImagesRoute,
  createImageRoute,
  getImageRoute,
  updateImageRoute,
  listPoliciesRoute,
  createPolicyRoute,
  getPolicyRoute,
  updatePolicyRoute,
];
