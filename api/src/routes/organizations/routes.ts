// Organizations and their members. super_admins create and delete organizations; an organization's
// org_admins change it and its members; anyone in it reads it. Outside your organizations: 404.
import { z } from "zod";
import { Page, Paged } from "../../db/paging.ts";
import { getWelcomeCredit, setWelcomeCredit } from "../../domain/credits/welcome.ts";
import {
  addOrganizationMember,
  listOrganizationMembers,
  removeOrganizationMember,
} from "../../domain/identity/members.ts";
import {
  createOrganization,
  deleteOrganization,
  getOrganization,
  listOrganizations,
  updateOrganization,
} from "../../domain/identity/organizations.ts";
import { pauseSessionsOfFormerMember } from "../../domain/sessions/pauseForSystem.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { presentMember, presentOrganization } from "./presenter.ts";
import {
  AddOrganizationMemberBody,
  CreateOrganizationBody,
  ListOrganizationsQuery,
  Member,
  Organization,
  OrganizationMemberParams,
  OrganizationParams,
  SetWelcomeCreditBody,
  UpdateOrganizationBody,
  WelcomeCredit,
} from "./schemas.ts";

export const createOrganizationRoute = defineRoute({
  method: "post",
  path: "/api/v1/organizations",
  operationId: "createOrganization",
  tags: ["organizations"],
  summary: "Create an organization (super_admin)",
  auth: "user",
  body: CreateOrganizationBody,
  idempotent: true,
  audit: "organization.create",
  responses: { 201: Organization },
  handler: async ({ deps, principal, body, audit }) => {
    const org = await createOrganization(deps, principal, {
      name: body.name,
      ...(body.slug ? { slug: body.slug } : {}),
    });
    audit.target("organization", org.id);
    audit.organization(org.id);
    return { status: 201, body: presentOrganization(org) };
  },
});

export const listOrganizationsRoute = defineRoute({
  method: "get",
  path: "/api/v1/organizations",
  operationId: "listOrganizations",
  tags: ["organizations"],
  summary: "List the organizations you belong to (all, for super_admins)",
  auth: "user",
  query: ListOrganizationsQuery,
  responses: { 200: Paged(Organization) },
  handler: async ({ deps, principal, query }) => {
    const { rows, total } = await listOrganizations(deps, principal, query);
    return {
      status: 200,
      body: { data: rows.map(presentOrganization), pagination: { page: query.page, size: query.size, total } },
    };
  },
});

export const getOrganizationRoute = defineRoute({
  method: "get",
  path: "/api/v1/organizations/:organizationId",
  operationId: "getOrganization",
  tags: ["organizations"],
  summary: "An organization",
  auth: "user",
  params: OrganizationParams,
  responses: { 200: Organization },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentOrganization(await getOrganization(deps, principal, params.organizationId)),
  }),
});

export const updateOrganizationRoute = defineRoute({
  method: "patch",
  path: "/api/v1/organizations/:organizationId",
  operationId: "updateOrganization",
  tags: ["organizations"],
  summary: "Rename an organization or change its slug (its org_admins, super_admins)",
  auth: "user",
  params: OrganizationParams,
  body: UpdateOrganizationBody,
  audit: "organization.update",
  errors: ["conflict", "already_exists"],
  responses: { 200: Organization },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.target("organization", params.organizationId);
    audit.organization(params.organizationId);
    const org = await updateOrganization(deps, principal, params.organizationId, {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.slug !== undefined ? { slug: body.slug } : {}),
    });
    return { status: 200, body: presentOrganization(org) };
  },
});

export const deleteOrganizationRoute = defineRoute({
  method: "delete",
  path: "/api/v1/organizations/:organizationId",
  operationId: "deleteOrganization",
  tags: ["organizations"],
  summary: "Delete an organization without projects (super_admin)",
  description: "409 conflict while the organization still has projects.",
  auth: "user",
  params: OrganizationParams,
  audit: "organization.delete",
  errors: ["conflict"],
  responses: { 204: z.null() },
  handler: async ({ deps, principal, params, audit }) => {
    audit.target("organization", params.organizationId);
    audit.organization(params.organizationId);
    await deleteOrganization(deps, principal, params.organizationId);
    return { status: 204, body: null };
  },
});

export const listOrganizationMembersRoute = defineRoute({
  method: "get",
  path: "/api/v1/organizations/:organizationId/members",
  operationId: "listOrganizationMembers",
  tags: ["organizations"],
  summary: "The organization's own members (organization-level memberships)",
  auth: "user",
  params: OrganizationParams,
  query: Page,
  responses: { 200: Paged(Member) },
  handler: async ({ deps, principal, params, query }) => {
    const { rows, total } = await listOrganizationMembers(deps, principal, params.organizationId, query);
    return {
      status: 200,
      body: { data: rows.map(presentMember), pagination: { page: query.page, size: query.size, total } },
    };
  },
});

export const addOrganizationMemberRoute = defineRoute({
  method: "post",
  path: "/api/v1/organizations/:organizationId/members",
  operationId: "addOrganizationMember",
  tags: ["organizations"],
  summary: "Add a member with a role, or change a member's role (its org_admins, super_admins)",
  description: "201 when the user joins; 200 when they were a member already and their role is now `role`.",
  auth: "user",
  params: OrganizationParams,
  body: AddOrganizationMemberBody,
  idempotent: true,
  audit: "organization.member.add",
  errors: ["conflict"],
  responses: { 201: Member, 200: Member },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.organization(params.organizationId);
    const { member, created } = await addOrganizationMember(deps, principal, params.organizationId, {
      role: body.role,
      ...(body.user_id !== undefined ? { userId: body.user_id } : {}),
      ...(body.email !== undefined ? { email: body.email } : {}),
    });
    audit.target("user", member.user_id);
    audit.detail("role", member.role);
    return created ? { status: 201, body: presentMember(member) } : { status: 200, body: presentMember(member) };
  },
});

export const removeOrganizationMemberRoute = defineRoute({
  method: "delete",
  path: "/api/v1/organizations/:organizationId/members/:userId",
  operationId: "removeOrganizationMember",
  tags: ["organizations"],
  summary: "Remove a member from the organization and all of its projects",
  auth: "user",
  params: OrganizationMemberParams,
  audit: "organization.member.remove",
  errors: ["conflict"],
  responses: { 204: z.null() },
  handler: async ({ deps, principal, params, audit }) => {
    audit.organization(params.organizationId);
    audit.target("user", params.userId);
    await removeOrganizationMember(deps, principal, params.organizationId, params.userId);
    // They no longer reach their sessions there: those stop drawing on the organization's wallets.
    void pauseSessionsOfFormerMember(deps, params.userId, params.organizationId);
    return { status: 204, body: null };
  },
});

function presentWelcome(
  organizationId: string,
  w: { amount: bigint; updatedBy: string | null; updatedAt: Date | null },
): z.input<typeof WelcomeCredit> {
  return {
    organization_id: organizationId,
    amount: w.amount.toString(),
    updated_by: w.updatedBy,
    updated_at: w.updatedAt ? new Date(w.updatedAt).toISOString() : null,
  };
}

export const getWelcomeCreditRoute = defineRoute({
  method: "get",
  path: "/api/v1/organizations/:organizationId/welcome-credit",
  operationId: "getWelcomeCredit",
  tags: ["organizations"],
  summary: "What each new member receives once from the organization's wallet (its org_admins, super_admins)",
  auth: "user",
  params: OrganizationParams,
  errors: ["forbidden"],
  responses: { 200: WelcomeCredit },
  handler: async ({ deps, principal, params }) => ({
    status: 200,
    body: presentWelcome(params.organizationId, await getWelcomeCredit(deps, principal, params.organizationId)),
  }),
});

export const setWelcomeCreditRoute = defineRoute({
  method: "put",
  path: "/api/v1/organizations/:organizationId/welcome-credit",
  operationId: "setWelcomeCredit",
  tags: ["organizations"],
  summary: "Set the welcome credit (its org_admins, super_admins)",
  description:
    "Each member who joins from now on (added, created, imported) receives it once, as an allocation from the organization's wallet. When the wallet cannot pay, the member still joins and the admin who added them is told.",
  auth: "user",
  params: OrganizationParams,
  body: SetWelcomeCreditBody,
  audit: "organization.welcome_credit.set",
  errors: ["forbidden"],
  responses: { 200: WelcomeCredit },
  handler: async ({ deps, principal, params, body, audit }) => {
    audit.organization(params.organizationId);
    audit.detail("amount", body.amount);
    const w = await setWelcomeCredit(deps, principal, params.organizationId, BigInt(body.amount));
    return { status: 200, body: presentWelcome(params.organizationId, w) };
  },
});

export const routes: RouteDef[] = [
  getWelcomeCreditRoute,
  setWelcomeCreditRoute,
  createOrganizationRoute,
  listOrganizationsRoute,
  getOrganizationRoute,
  updateOrganizationRoute,
  deleteOrganizationRoute,
  listOrganizationMembersRoute,
  addOrganizationMemberRoute,
  removeOrganizationMemberRoute,
];
