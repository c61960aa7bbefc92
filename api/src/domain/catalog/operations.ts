// Read and write catalog objects on behalf of a caller. Objects outside the caller's view are 404.

import { ZodError } from "zod";
import type { Deps } from "../../deps.ts";
import { Conflict, Forbidden, Invalid, NotFound, type ValidationIssue } from "../../errors.ts";
import type { Principal } from "../identity/principal.ts";
import { scopeOf } from "../identity/scope.ts";
import type { CatalogResource, VisibilityContext } from "./resources.ts";
import {
  catalogClient,
  createObject,
  getObject,
  type KubeObject,
  kubeMessage,
  kubeStatus,
  listObjects,
  replaceObject,
} from "./store.ts";

type CatalogDeps = Pick<Deps, "db" | "kube">;

async function visibility(deps: CatalogDeps, principal: Principal, r: CatalogResource): Promise<VisibilityContext> {
  const scope = scopeOf(principal);
  let adminOrgProjects = new Set<string>();
  if (r.needsProjects && !scope.all && scope.adminOrganizations.size > 0) {
    const rows = (await deps
      .db("projects")
      .whereIn("organization_id", [...scope.adminOrganizations])
      .select("id")) as { id: string }[];
    adminOrgProjects = new Set(rows.map((p) => p.id));
  }
  return { scope, adminOrgProjects };
}

export async function listCatalog(
  deps: CatalogDeps,
  principal: Principal,
  r: CatalogResource,
  filter: (o: KubeObject) => boolean = () => true,
): Promise<KubeObject[]> {
  const [items, v] = await Promise.all([listObjects(catalogClient(deps.kube), r.kind), visibility(deps, principal, r)]);
  return items.filter((o) => r.visible(o, v) && filter(o));
}

export async function getCatalog(
  deps: CatalogDeps,
  principal: Principal,
  r: CatalogResource,
  name: string,
): Promise<KubeObject> {
  const [o, v] = await Promise.all([getObject(catalogClient(deps.kube), r.kind, name), visibility(deps, principal, r)]);
  if (!o || !r.visible(o, v)) throw new NotFound(r.noun, name);
  return o;
}

function requireSuperAdmin(principal: Principal, r: CatalogResource): void {
  if (!principal.isSuperAdmin) throw new Forbidden(`only a super_admin changes ${r.noun}s`);
}

const snake = (s: string | number) => (typeof s === "number" ? s : s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));

/** zod's issues on a spec, as issues on the REST body (camelCase spec fields are snake_case there). */
function specIssues(err: ZodError): ValidationIssue[] {
  return err.issues.map((i) => {
    const path = i.path.map((p) => (typeof p === "symbol" ? String(p) : p));
    const inSpec = path[0] === "spec" ? path.slice(1) : path;
    return { path: ["body", ...inSpec.map(snake)], message: i.message, code: i.code };
  });
}

/** Builds the object with the kind's schema (defaults, cross-field rules); a bad spec is 400 naming the fields. */
function build(r: CatalogResource, metadata: KubeObject["metadata"], spec: unknown): KubeObject {
  try {
    return r.kind.build(metadata as never, spec as never) as KubeObject;
  } catch (e) {
    if (e instanceof ZodError) throw new Invalid(`the ${r.noun} is invalid`, specIssues(e));
    throw e;
  }
}

/** The apiserver's own refusals: 409 exists / changed meanwhile, 422 its validation (CEL rules). */
function mapKube(e: unknown, r: CatalogResource, name: string, creating: boolean): never {
  const code = kubeStatus(e);
  if (code === 409) {
    throw creating
      ? new Conflict(`a ${r.noun} named "${name}" already exists`, { name }, "already_exists")
      : new Conflict(`the ${r.noun} "${name}" changed meanwhile; read it again and retry`, { name });
  }
  if (code === 422 || code === 400)
    throw new Invalid(`the ${r.noun} is invalid: ${kubeMessage(e)}`, [
      { path: ["body"], message: kubeMessage(e), code: "apiserver" },
    ]);
  if (code === 404 && !creating) throw new NotFound(r.noun, name);
  throw e;
}

export async function createCatalog(
  deps: CatalogDeps,
  principal: Principal,
  r: CatalogResource,
  name: string,
  spec: Record<string, unknown>,
): Promise<KubeObject> {
  requireSuperAdmin(principal, r);
  const body = build(r, { name, labels: { "app.kubernetes.io/part-of": "berth" } }, spec);
  try {
    return await createObject(catalogClient(deps.kube), r.kind, body);
  } catch (e) {
    mapKube(e, r, name, true);
  }
}

/** Merges `changes` into the current spec, validates the whole, and replaces at the version read. */
export async function updateCatalog(
  deps: CatalogDeps,
  principal: Principal,
  r: CatalogResource,
  name: string,
  changes: (spec: Record<string, unknown>) => Record<string, unknown>,
): Promise<KubeObject> {
  const current = await getCatalog(deps, principal, r, name);
  requireSuperAdmin(principal, r);
  const built = build(r, current.metadata, changes(structuredClone(current.spec)));
  try {
    return await replaceObject(catalogClient(deps.kube), r.kind, { ...current, spec: built.spec });
  } catch (e) {
    mapKube(e, r, name, false);
  }
}
