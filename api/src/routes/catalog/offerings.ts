// /api/v1/offerings: the GPU offerings and their hourly credit rates; a fraction of a card or a MIG profile
// is checked before it is stored (domain/catalog/gpuFraction.ts).
import { Paged, pageOf } from "../../db/paging.ts";
import { checkFraction, checkMigOffering, parseFraction } from "../../domain/catalog/gpuFraction.ts";
import { createCatalog, getCatalog, listCatalog, updateCatalog } from "../../domain/catalog/operations.ts";
import { offerings } from "../../domain/catalog/resources.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentOffering } from "./presenter.ts";
import { CreateOfferingBody, ListOfferingsQuery, NameParams, Offering, UpdateOfferingBody } from "./schemas.ts";
import { toSpec } from "./shared.ts";

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

export const routes: RouteDef[] = [listOfferingsRoute, createOfferingRoute, getOfferingRoute, updateOfferingRoute];
