import { z } from "zod";
import { ClusterIdParam } from "../clusters/schemas.ts";

const PoolId = z.string().regex(/^npl_[a-z0-9]{20}$/, "a node pool id: npl_ and 20 lowercase letters or digits");
const GrantId = z.string().regex(/^npg_[a-z0-9]{20}$/, "a grant id: npg_ and 20 lowercase letters or digits");
const PoolName = z
  .string()
  .trim()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "lowercase letters, digits and dashes, starting and ending alphanumeric");
const Selector = z.string().min(1).max(1024).meta({
  description:
    "One label requirement: `key=value` or `key in (a,b)`. Nodes whose label has one of the values are in the pool.",
  example: "berth.dev/pool=research",
});

export const ClusterNodePoolsParams = z.object({ clusterId: ClusterIdParam });
export const NodePoolParams = z.object({ clusterId: ClusterIdParam, poolId: PoolId });
export const NodePoolGrantParams = z.object({ clusterId: ClusterIdParam, poolId: PoolId, grantId: GrantId });

export const CreateNodePoolBody = z
  .object({ name: PoolName, selector: Selector, description: z.string().max(500).optional() })
  .strict();
export const UpdateNodePoolBody = z
  .object({ name: PoolName.optional(), selector: Selector.optional(), description: z.string().max(500).optional() })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: "send at least one field", params: { code: "empty_body" } });

const OrgId = z.string().regex(/^org_[a-z0-9]{1,59}$/, "an organization id: org_…");
const ProjectId = z.string().regex(/^prj_[a-z0-9]{1,59}$/, "a project id: prj_…");
const UserId = z.string().regex(/^usr_[a-z0-9]{1,64}$/, "a user id: usr_…");
export const GrantNodePoolBody = z
  .object({
    organization_id: OrgId.optional(),
    project_id: ProjectId.optional(),
    user_id: UserId.optional().meta({
      description: "One person: only sessions they own may use the pool, in whichever organization they belong to.",
    }),
  })
  .strict()
  .refine((b) => [b.organization_id, b.project_id, b.user_id].filter((x) => x !== undefined).length === 1, {
    message: "name exactly one of organization_id, project_id and user_id",
    params: { code: "one_grantee" },
  });

export const NodePoolGrant = z
  .object({
    id: z.string(),
    grantee_kind: z.enum(["organization", "project", "user"]),
    grantee_id: z.string(),
    grantee_name: z
      .string()
      .nullable()
      .meta({ description: "The organization's or project's name; a person's email." }),
    grantee_organization_name: z
      .string()
      .nullable()
      .meta({ description: "A project grant's organization (project names repeat across organizations); else null." }),
    created_at: z.string(),
  })
  .meta({ id: "NodePoolGrant" });

export const LabelledNodePool = z
  .object({
    id: z.string(),
    cluster_id: z.string(),
    name: z.string(),
    description: z.string(),
    selector: z.string().meta({ description: "As normalised: `key=value` or `key in (a,b)`." }),
    label: z.object({ key: z.string(), values: z.array(z.string()) }),
    grants: z.array(NodePoolGrant).meta({ description: "Who may use its nodes; empty: nobody." }),
    nodes: z.array(z.string()).meta({ description: "The cluster's nodes it holds now (from the inventory)." }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({
    id: "LabelledNodePool",
    description:
      "A node pool of one cluster, by label, with the organizations, projects and people it is granted to (docs/dev/node-pools.md).",
  });

export const RevokeResult = LabelledNodePool.extend({
  warned_sessions: z.array(z.string()).meta({ description: "Running sessions whose owners were warned." }),
});
