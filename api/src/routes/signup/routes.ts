// Public sign-up and the approval queue (docs/dev/governance.md, "System settings").
import { z } from "zod";
import type { SignupRequestRow } from "../../db/operations/signup/signupRequests.ts";
import { Page, Paged } from "../../db/paging.ts";
import { decideSignup, signUp, signupQueue } from "../../domain/signup/signup.ts";
import { clientAddressOf } from "../../http/clientAddress.ts";
import { defineRoute, type RouteDef } from "../../http/route.ts";
import { isoTimestamp } from "../../http/timestamp.ts";
import { Email, NewPassword } from "../users/schemas.ts";

const SignupBody = z
  .object({
    email: Email,
    password: NewPassword,
    display_name: z.string().regex(/\S/, "not only spaces").trim().min(1).max(128).optional(),
  })
  .strict()
  .meta({ id: "SignupRequest" });

const SignupAnswer = z
  .object({
    user_id: z.string(),
    status: z.enum(["active", "pending_approval"]).meta({
      description: "active: sign in now; pending_approval: an administrator decides first.",
    }),
  })
  .meta({ id: "SignupAnswer" });

const SignupRequest = z
  .object({
    user_id: z.string(),
    email: z.string(),
    organization_id: z.string().nullable(),
    status: z.enum(["pending", "approved", "denied"]),
    created_at: z.string(),
    decided_by: z.string().nullable(),
    decided_at: z.string().nullable(),
  })
  .meta({ id: "SignupRequestEntry" });

const present = (r: SignupRequestRow): z.infer<typeof SignupRequest> => ({
  user_id: r.user_id,
  email: r.email,
  organization_id: r.organization_id,
  status: r.status,
  created_at: isoTimestamp(new Date(r.created_at)),
  decided_by: r.decided_by,
  decided_at: r.decided_at ? isoTimestamp(new Date(r.decided_at)) : null,
});

const UserIdParams = z.object({ userId: z.string().min(1).max(128) });

export const signupRoute = defineRoute({
  method: "post",
  path: "/api/v1/auth/signup",
  operationId: "signUp",
  tags: ["auth"],
  summary: "Create your own account, as the sign-up policy allows",
  description:
    "closed (the default): 403 signup_closed. open: the account is active at once. approval: the account waits for a super_admin (signing in is refused until then). Allowed domains, when set, limit both (403 signup_closed). An email in use is 409 already_exists. Attempts are throttled like sign-ins (5 per email and source address, 50 per source, 50 per email, in 15 minutes): 429 too_many_requests with Retry-After.",
  auth: "public",
  body: SignupBody,
  audit: "auth.signup",
  errors: ["signup_closed", "already_exists", "too_many_requests"],
  responses: { 201: SignupAnswer },
  handler: async ({ deps, body, ctx, audit }) => {
    const r = await signUp(deps, {
      email: body.email,
      password: body.password,
      displayName: body.display_name,
      source: clientAddressOf(ctx),
    });
    audit.target("user", r.userId);
    audit.detail("status", r.status);
    return { status: 201, body: { user_id: r.userId, status: r.status } };
  },
});

export const listSignupRequestsRoute = defineRoute({
  method: "get",
  path: "/api/v1/signup-requests",
  operationId: "listSignupRequests",
  tags: ["auth"],
  summary: "The sign-up approval queue (super_admin; others see an empty list)",
  auth: "user",
  query: Page.extend({ status: z.enum(["pending", "approved", "denied"]).optional() }).strict(),
  responses: { 200: Paged(SignupRequest) },
  handler: async ({ deps, principal, query }) => ({
    status: 200,
    body: await signupQueue(deps, principal, query.status, query, present),
  }),
});

function decideRoute(decision: "approved" | "denied") {
  const verb = decision === "approved" ? "approve" : "deny";
  return defineRoute({
    method: "post",
    path: `/api/v1/signup-requests/:userId/${verb}`,
    operationId: decision === "approved" ? "approveSignup" : "denySignup",
    tags: ["auth"],
    summary:
      decision === "approved"
        ? "Approve a sign-up: the account is enabled and joins the configured organization"
        : "Deny a sign-up: the account stays disabled",
    description: "super_admin only (403). A request that is not pending is 404.",
    auth: "user",
    params: UserIdParams,
    audit: `signup.${verb}`,
    responses: { 200: SignupRequest },
    handler: async ({ deps, principal, params, audit }) => {
      audit.target("user", params.userId);
      return { status: 200, body: present(await decideSignup(deps, principal, params.userId, decision)) };
    },
  });
}

export const routes: RouteDef[] = [
  signupRoute,
  listSignupRequestsRoute,
  decideRoute("approved"),
  decideRoute("denied"),
];
