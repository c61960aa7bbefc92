// Projects (the contract's groups): an organization's admins create, rename and delete them; project
// admins and members read their own.

import { deleteProject as deleteProjectRow } from "../../db/operations/projects/deleteProject.ts";
import { findProjectById } from "../../db/operations/projects/findProjectById.ts";
import { insertProject } from "../../db/operations/projects/insertProject.ts";
import { listProjects as listProjectRows } from "../../db/operations/projects/listProjects.ts";
import type { ProjectRow } from "../../db/operations/projects/types.ts";
import { updateProject as updateProjectRow } from "../../db/operations/projects/updateProject.ts";
import type { Deps } from "../../deps.ts";
import { Forbidden, NotFound } from "../../errors.ts";
import { mapConstraintErrors } from "./errors.ts";
import { newId } from "./ids.ts";
import { getOrganization } from "./organizations.ts";
import type { Principal } from "./principal.ts";
import { canAdminOrganization, canSeeProject, scopeOf } from "./scope.ts";

type IdentityDeps = Pick<Deps, "db">;

export async function createProject(
  deps: IdentityDeps,
  principal: Principal,
  input: { organizationId: string; name: string },
): Promise<ProjectRow> {
  await getOrganization(deps, principal, input.organizationId); // 404 outside the caller's organizations
  if (!canAdminOrganization(scopeOf(principal), input.organizationId))
    throw new Forbidden("only the organization's admins create projects");
  return mapConstraintErrors(
    () => insertProject(deps.db, { id: newId("prj"), organizationId: input.organizationId, name: input.name }),
    {
      unique: `the organization already has a project named "${input.name}"`,
      details: { field: "name" },
    },
  );
}

/** The caller's projects; an `organization` filter outside the caller's scope is ignored (Endpoints rule 1). */
export async function listProjects(
  deps: IdentityDeps,
  principal: Principal,
  input: { organizationId?: string; page: number; size: number },
) {
  const s = scopeOf(principal);
  const filterInScope = input.organizationId !== undefined && (s.all || s.organizations.has(input.organizationId));
  return listProjectRows(deps.db, {
    ...(s.all ? {} : { visibleTo: { organizationIds: [...s.adminOrganizations], projectIds: [...s.projects] } }),
    ...(filterInScope ? { organizationId: input.organizationId } : {}),
    limit: input.size,
    offset: (input.page - 1) * input.size,
  });
}

export async function getProject(deps: IdentityDeps, principal: Principal, id: string): Promise<ProjectRow> {
  const p = await findProjectById(deps.db, id);
  if (!p || !canSeeProject(scopeOf(principal), p)) throw new NotFound("project", id);
  return p;
}

export async function updateProject(
  deps: IdentityDeps,
  principal: Principal,
  id: string,
  input: { name?: string },
): Promise<ProjectRow> {
  const p = await getProject(deps, principal, id);
  if (!canAdminOrganization(scopeOf(principal), p.organization_id))
    throw new Forbidden("only the organization's admins change its projects");
  const updated = await mapConstraintErrors(() => updateProjectRow(deps.db, id, input), {
    unique: `the organization already has a project named "${input.name}"`,
    details: { field: "name" },
  });
  if (!updated) throw new NotFound("project", id);
  return updated;
}

export async function deleteProject(deps: IdentityDeps, principal: Principal, id: string): Promise<void> {
  const p = await getProject(deps, principal, id);
  if (!canAdminOrganization(scopeOf(principal), p.organization_id))
    throw new Forbidden("only the organization's admins delete its projects");
  await mapConstraintErrors(() => deleteProjectRow(deps.db, id), {
    unique: "conflict",
    foreignKey: "the project still has objects that refer to it; delete them first",
  });
}
