import { z } from "zod";
import { Page } from "../../db/paging.ts";
import { Email, Id } from "../users/schemas.ts";

const Timestamp = z.string().meta({ description: "RFC 3339, UTC." });
const Name = z.string().regex(/\S/, "not only spaces").trim().min(1).max(128);
export const Slug = z
  .string()
  .regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, "lowercase letters, digits and inner hyphens, at most 63 characters");

export const Organization = z
  .object({
    id: z.string().meta({ example: "org_8f2k1m0x9c7v5b3n6q4w" }),
    name: z.string(),
    slug: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "Organization" });
export type Organization = z.infer<typeof Organization>;

export const OrganizationParams = z.object({ organizationId: Id });
export const OrganizationMemberParams = z.object({ organizationId: Id, userId: Id });
export const ListOrganizationsQuery = Page;

export const CreateOrganizationBody = z
  .object({ name: Name, slug: Slug.optional().meta({ description: "Default: made from the name." }) })
  .meta({ id: "CreateOrganizationRequest" });
export const UpdateOrganizationBody = z
  .object({ name: Name.optional(), slug: Slug.optional() })
  .meta({ id: "UpdateOrganizationRequest" });

export const Member = z
  .object({
    user_id: z.string(),
    email: z.string(),
    display_name: z.string().nullable(),
    organization_id: z.string(),
    project_id: z.string().nullable().meta({ description: "null for a membership of the organization itself." }),
    role: z.enum(["org_admin", "project_admin", "member"]),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "Member" });
export type Member = z.infer<typeof Member>;

const MemberRef = {
  user_id: Id.optional().meta({ description: "The member, by id; or give email." }),
  // An address, as the document says: a trim before a length check let " ab" pass the schema and fail here.
  email: Email.optional().meta({ description: "The member, by email; or give user_id." }),
};
const exactlyOne = (o: { user_id?: string | undefined; email?: string | undefined }) =>
  (o.user_id === undefined) !== (o.email === undefined);

export const AddOrganizationMemberBody = z
  .object({ ...MemberRef, role: z.enum(["org_admin", "member"]) })
  .refine(exactlyOne, { message: "give exactly one of user_id and email" })
  .meta({ id: "AddOrganizationMemberRequest" });

export const AddProjectMemberBody = z
  .object({ ...MemberRef, role: z.enum(["project_admin", "member"]) })
  .refine(exactlyOne, { message: "give exactly one of user_id and email" })
  .meta({ id: "AddProjectMemberRequest" });

export const WelcomeCredit = z
  .object({
    organization_id: z.string(),
    amount: z.string().meta({
      description:
        'Minor units (1 credit = 1000000) each new member receives once from the organization\'s wallet; "0": none.',
      example: "5000000",
    }),
    updated_by: z.string().nullable(),
    updated_at: Timestamp.nullable(),
  })
  .meta({ id: "WelcomeCredit" });

export const SetWelcomeCreditBody = z
  .object({
    amount: z
      .string()
      .regex(/^(0|[1-9][0-9]{0,17})$/, "a whole number of minor units, as a string")
      .meta({ description: 'Minor units as a decimal string; "0" turns the welcome credit off.' }),
  })
  .meta({ id: "SetWelcomeCreditRequest" });
