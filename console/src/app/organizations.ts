// Organizations and projects, and their members. The first page of organizations is what every picker
// of an organization shows (settings, projects, people, directory).
import type { BodyOf } from "../api/client.ts";
import { api } from "./context.ts";

export function loadOrganizations(signal?: AbortSignal) {
  return api.call("listOrganizations", { query: { size: 100 } }, { signal });
}

export function createOrganization(name: string) {
  return api.call("createOrganization", { body: { name } });
}

export function deleteOrganization(organizationId: string) {
  return api.call("deleteOrganization", { params: { organizationId } });
}

export function loadOrganizationMembers(organizationId: string, signal?: AbortSignal) {
  return api.call("listOrganizationMembers", { params: { organizationId }, query: { size: 100 } }, { signal });
}

export function addOrganizationMember(organizationId: string, body: BodyOf<"addOrganizationMember">) {
  return api.call("addOrganizationMember", { params: { organizationId }, body });
}

export function removeOrganizationMember(organizationId: string, userId: string) {
  return api.call("removeOrganizationMember", { params: { organizationId, userId } });
}

/** `organization`: only its projects. */
export function loadProjects(organization: string | undefined, signal?: AbortSignal) {
  return api.call("listProjects", { query: { size: 100, ...(organization ? { organization } : {}) } }, { signal });
}

export function createProject(organizationId: string, name: string) {
  return api.call("createProject", { body: { organization_id: organizationId, name } });
}

export function deleteProject(projectId: string) {
  return api.call("deleteProject", { params: { projectId } });
}

export function loadProjectMembers(projectId: string, signal?: AbortSignal) {
  return api.call("listProjectMembers", { params: { projectId }, query: { size: 100 } }, { signal });
}

export function addProjectMember(projectId: string, body: BodyOf<"addProjectMember">) {
  return api.call("addProjectMember", { params: { projectId }, body });
}

export function removeProjectMember(projectId: string, userId: string) {
  return api.call("removeProjectMember", { params: { projectId, userId } });
}
