// Organizations: super_admins create and delete them; their org_admins rename them; every member reads.

import { deleteOrganization as deleteOrganizationRow } from "../../db/operations/organizations/deleteOrganization.ts";
import { findOrganizationById } from "../../db/operations/organizations/findOrganizationById.ts";
import { insertOrganization } from "../../db/operations/organizations/insertOrganization.ts";
import { listOrganizations as listOrganizationRows } from "../../db/operations/organizations/listOrganizations.ts";
import type { OrganizationRow } from "../../db/operations/organizations/types.ts";
import { updateOrganization as updateOrganizationRow } from "../../db/operations/organizations/updateOrganization.ts";
import { countProjectsOfOrganization } from "../../db/operations/projects/countProjectsOfOrganization.ts";
import type { Deps } from "../../deps.ts";
import { Conflict, Forbidden, NotFound } from "../../errors.ts";
import { mapConstraintErrors } from "./errors.ts";
import { newId } from "./ids.ts";
import type { Principal } from "./principal.ts";
import { canAdminOrganization, canSeeOrganization, scopeOf } from "./scope.ts";

type IdentityDeps = Pick<Deps, "db">;

/** "Acme Research, Inc." -> "acme-research-inc" (DNS-label shape, as the slug CHECK wants). */
export function slugify(name: string): string {
  const s = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63)
    .replace(/-+$/g, "");
  return s === "" ? "org" : s;
}

export async function createOrganization(
  deps: IdentityDeps,
  principal: Principal,
  input: { name: string; slug?: string },
): Promise<OrganizationRow> {
  if (!principal.isSuperAdmin) throw new Forbidden("only a super_admin creates organizations");
  const slug = input.slug ?? slugify(input.name);
  return mapConstraintErrors(() => insertOrganization(deps.db, { id: newId("org"), name: input.name, slug }), {
    unique: `an organization with slug "${slug}" already exists`,
    details: { field: "slug", slug },
  });
}

export async function listOrganizations(
  deps: IdentityDeps,
  principal: Principal,
  page: { page: number; size: number },
) {
  const s = scopeOf(principal);
  return listOrganizationRows(deps.db, {
    ...(s.all ? {} : { ids: [...s.organizations] }),
    limit: page.size,
    offset: (page.page - 1) * page.size,
  });
}

/** 404 for an organization that does not exist and for one the caller has no part in. */
export async function getOrganization(deps: IdentityDeps, principal: Principal, id: string): Promise<OrganizationRow> {
  const org = canSeeOrganization(scopeOf(principal), id) ? await findOrganizationById(deps.db, id) : undefined;
  if (!org) throw new NotFound("organization", id);
  return org;
}

export async function updateOrganization(
  deps: IdentityDeps,
  principal: Principal,
  id: string,
  input: { name?: string; slug?: string },
): Promise<OrganizationRow> {
  await getOrganization(deps, principal, id);
  if (!canAdminOrganization(scopeOf(principal), id)) throw new Forbidden("only the organization's admins change it");
  const updated = await mapConstraintErrors(() => updateOrganizationRow(deps.db, id, input), {
    unique: `an organization with slug "${input.slug}" already exists`,
    details: { field: "slug" },
  });
  if (!updated) throw new NotFound("organization", id);
  return updated;
}

/** super_admin only, and only once the organization has no projects left. */
export async function deleteOrganization(deps: IdentityDeps, principal: Principal, id: string): Promise<void> {
  await getOrganization(deps, principal, id);
  if (!principal.isSuperAdmin) throw new Forbidden("only a super_admin deletes organizations");
  const projects = await countProjectsOfOrganization(deps.db, id);
  if (projects > 0) throw new Conflict("the organization still has projects; delete them first", { projects });
  await mapConstraintErrors(() => deleteOrganizationRow(deps.db, id), {
    unique: "conflict",
    foreignKey: "the organization still has objects that refer to it; delete them first",
  });
}
