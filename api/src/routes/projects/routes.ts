// Projects (the contract's groups) and their members. The organization's org_admins create, change and
// delete projects; project_admins manage their project's members; members read their projects.
import { z } from "zod";
import { Page, Paged } from "../../db/paging.ts";
import { addProjectMember, listProjectMembers, removeProjectMember } from "../../domain/identity/members.ts";
import {
  createProject,
  deleteProject,
  getProject,
  listProjects,
  updateProject,
} from "../../domain/identity/projects.ts";
import { pauseSessionsOfFormerMember } from "../../domain/sessions/pauseForSystem.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentMember } from "../organizations/presenter.ts";
import { AddProjectMemberBody, Member } from "../organizations/schemas.ts";
import { presentProject } from "./presenter.ts";
import {
  CreateProjectBody,
  ListProjectsQuery,
  Project,
  ProjectMemberParams,
  ProjectParams,
  UpdateProjectBody,
} from "./schemas.ts";

export const createProjectRoute = defineRoute({
  method: "post",
  path: "/api/v1/projects",
  operationId: "createProject",
  tags: ["projects"],
  summary: "Create a project in an organization (its org_admins, super_admins)",
  auth: "user",
  body: CreateProjectBody,
  idempotent: true,
  audit: "project.create",
  errors: ["not_found", "conflict", "already_exists"],
  responses: { 201: Project },
  handler: async ({ deps, principal, body, audit }) => {
    audit.organization(body.organization_id);
    const p = await createProject(deps, principal, { organizationId: body.organization_id, name: body.name });
    audit.target("project", p.id);
    return { status: 201, body: presentProject(p) };
  },
});

export const listProjectsRoute = defineRoute({
  method: "get",
  path: "/api/v1/projects",
  operationId: "listProjects",
  tags: ["projects"],
  summary: "List the projects you may see",
  description:
    "All projects of the organizations you administer, and the projects you are a member of. Filters outside your scope are ignored.",
  auth: "user",
  query: ListProjectsQuery,
  responses: { 200: Paged(Project) },
  handler: async ({ deps, principal, query }) => {
    const { rows, total } = await listProjects(deps, principal, {
      page: query.page,
      size: query.size,
      ...(query.organization ? { organizationId: query.organization } : {}),
    });
    return {
      status: 200,
      body: { data: rows.map(presentProject), pagination: { page: query.page, size: query.size, total } },
    };
  },
});

export const getProjectRoute = defineRoute({
  method: "get",
  path: "/api/v1/projects/:projectId",
  operationId: "getProject",
  tags: ["projects"],
  summary: "A project",
  auth: "user",
  params: ProjectParams,
  responses: { 200: Project },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentProject(await getProject(deps, principal, params.projectId)),
  }),
});

export const updateProjectRoute = defineRoute({
  method: "patch",
  path: "/api/v1/projects/:projectId",
  operationId: "updateProject",
  tags: ["projects"],
  summary: "Rename a project (the organization's org_admins, super_admins)",
  auth: "user",
  params: ProjectParams,
  body: UpdateProjectBody,
  audit: "project.update",
  errors: ["conflict", "already_exists"],
  responses: { 200: Project },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("project", params.projectId);
    const p = await updateProject(
      deps,
      principal,
      params.projectId,
      body.name !== undefined ? { name: body.name } : {},
    );
    audit.organization(p.organization_id);
    return { status: 200, body: presentProject(p) };
  },
});

export const deleteProjectRoute = defineRoute({
  method: "delete",
  path: "/api/v1/projects/:projectId",
  operationId: "deleteProject",
  tags: ["projects"],
  summary: "Delete a project (the organization's org_admins, super_admins)",
  auth: "user",
  params: ProjectParams,
  audit: "project.delete",
  responses: { 204: z.null() },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("project", params.projectId);
    await deleteProject(deps, principal, params.projectId);
    return { status: 204, body: null };
  },
});

export const listProjectMembersRoute = defineRoute({
  method: "get",
  path: "/api/v1/projects/:projectId/members",
  operationId: "listProjectMembers",
  tags: ["projects"],
  summary: "The project's members",
  auth: "user",
  params: ProjectParams,
  query: Page,
  responses: { 200: Paged(Member) },
  handler: async ({ deps, principal, params, query }) => {
    const { rows, total } = await listProjectMembers(deps, principal, params.projectId, query);
    return {
      status: 200,
      body: { data: rows.map(presentMember), pagination: { page: query.page, size: query.size, total } },
    };
  },
});

export const addProjectMemberRoute = defineRoute({
  method: "post",
  path: "/api/v1/projects/:projectId/members",
  operationId: "addProjectMember",
  tags: ["projects"],
  summary: "Add a member with a role, or change a member's role (project_admins, org_admins, super_admins)",
  description: "201 when the user joins; 200 when they were a member already and their role is now `role`.",
  auth: "user",
  params: ProjectParams,
  body: AddProjectMemberBody,
  idempotent: true,
  audit: "project.member.add",
  errors: ["conflict"],
  responses: { 201: Member, 200: Member },
  handler: async ({ deps, principal, params, body, audit }) => {
    const { member, created } = await addProjectMember(deps, principal, params.projectId, {
      role: body.role,
      ...(body.user_id !== undefined ? { userId: body.user_id } : {}),
      ...(body.email !== undefined ? { email: body.email } : {}),
    });
    audit.organization(member.organization_id);
    audit.target("user", member.user_id);
    audit.detail("project_id", params.projectId);
    audit.detail("role", member.role);
    return created ? { status: 201, body: presentMember(member) } : { status: 200, body: presentMember(member) };
  },
});

export const removeProjectMemberRoute = defineRoute({
  method: "delete",
  path: "/api/v1/projects/:projectId/members/:userId",
  operationId: "removeProjectMember",
  tags: ["projects"],
  summary: "Remove a member from the project",
  auth: "user",
  params: ProjectMemberParams,
  audit: "project.member.remove",
  errors: ["conflict"],
  responses: { 204: z.null() },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("user", params.userId);
    audit.detail("project_id", params.projectId);
    const { organizationId } = await removeProjectMember(deps, principal, params.projectId, params.userId);
    // Their last membership of the organization: their sessions there are paused (as a removal from it).
    void pauseSessionsOfFormerMember(deps, params.userId, organizationId);
    return { status: 204, body: null };
  },
});

export const routes: RouteDef[] = [
  createProjectRoute,
  listProjectsRoute,
  getProjectRoute,
  updateProjectRoute,
  deleteProjectRoute,
  listProjectMembersRoute,
  addProjectMemberRoute,
  removeProjectMemberRoute,
];
