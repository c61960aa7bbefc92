// /api/v1/resource-presets: the CPU, memory and GPU count a session asks for.
import { Paged, pageOf } from "../../db/paging.ts";
import { createCatalog, getCatalog, listCatalog, updateCatalog } from "../../domain/catalog/operations.ts";
import { presets } from "../../domain/catalog/resources.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentPreset } from "./presenter.ts";
import {
  CreateResourcePresetBody,
  ListResourcePresetsQuery,
  NameParams,
  ResourcePreset,
  UpdateResourcePresetBody,
} from "./schemas.ts";
import { toSpec } from "./shared.ts";

const PRESET_FIELDS = {
  display_name: "displayName",
  kind: "kind",
  cpu: "cpu",
  memory: "memory",
  gpu_count: "gpuCount",
};

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

export const routes: RouteDef[] = [listPresetsRoute, createPresetRoute, getPresetRoute, updatePresetRoute];
