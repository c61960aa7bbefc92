import { z } from "zod";
import { Page } from "../../db/paging.ts";
import { weakPassword } from "../../domain/identity/weakPassword.ts";

const Timestamp = z.string().meta({ description: "RFC 3339, UTC." });
export const Id = z.string().min(1).max(128);
/** The document states the format and pattern zod checks (a pipe would hide them from clients). */
export const Email = z.email().max(320);
/**
 * Set by an administrator (a temporary password the user changes at first sign-in) or by the user. A
 * guessable one (domain/identity/weakPassword.ts) is a validation issue whose code says why
 * (`common_password`, `repeated_characters`, `sequence`).
 */
export const NewPassword = z
  .string()
  .min(12, "must be at least 12 characters")
  .max(256, "must be at most 256 characters")
  .superRefine((value, ctx) => {
    const weak = weakPassword(value);
    if (weak) ctx.addIssue({ code: "custom", message: weak.message, params: { code: weak.reason } });
  })
  .meta({
    description:
      "12-256 characters; not a commonly used or breached password, a repetition or a sequence (refused with the reason).",
  });
const DisplayName = z.string().regex(/\S/, "not only spaces").trim().min(1).max(128);

export const MembershipOfUser = z
  .object({
    organization_id: z.string(),
    project_id: z.string().nullable().meta({ description: "null: a membership of the organization itself." }),
    role: z.enum(["org_admin", "project_admin", "member"]),
  })
  .meta({ id: "MembershipOfUser" });

export const User = z
  .object({
    id: z.string().meta({ example: "usr_3k9v0c2m5q8x1w7z4r6t" }),
    email: z.string(),
    display_name: z.string().nullable(),
    is_super_admin: z.boolean(),
    must_change_password: z.boolean().meta({ description: "When true, only the password endpoints may be called." }),
    disabled: z.boolean(),
    last_login_at: Timestamp.nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "User" });
export type User = z.infer<typeof User>;

export const UserDetail = User.extend({ memberships: z.array(MembershipOfUser) }).meta({ id: "UserDetail" });
export type UserDetail = z.infer<typeof UserDetail>;

export const UserParams = z.object({ userId: Id });

export const ListUsersQuery = Page.extend({
  organization: Id.optional().meta({
    description: "Only members of this organization (ignored when outside your scope).",
  }),
  project: Id.optional().meta({ description: "Only members of this project (ignored when outside your scope)." }),
  email: z.string().max(320).optional().meta({ description: "Email prefix." }),
});

export const CreateUserBody = z
  .object({
    email: Email,
    password: NewPassword.meta({ description: "A temporary password: the user must change it at first sign-in." }),
    display_name: DisplayName.optional(),
    is_super_admin: z.boolean().optional().meta({ description: "super_admins only." }),
    organization_id: Id.optional().meta({
      description: "The organization the user joins; required unless you are a super_admin.",
    }),
    role: z.enum(["org_admin", "member"]).optional().meta({ description: "Role in organization_id; default member." }),
  })
  .meta({ id: "CreateUserRequest" });

export const UpdateUserBody = z
  .object({
    email: Email.optional(),
    display_name: DisplayName.nullable().optional(),
    is_super_admin: z.boolean().optional(),
    disabled: z.boolean().optional().meta({ description: "Disabling revokes the account's tokens at once." }),
    password: NewPassword.optional().meta({
      description: "An administrator's reset: temporary, to be changed at next sign-in; revokes the account's tokens.",
    }),
  })
  .meta({ id: "UpdateUserRequest" });
