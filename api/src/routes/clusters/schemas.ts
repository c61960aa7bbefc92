import { z } from "zod";
import { Page } from "../../db/paging.ts";

const Timestamp = z.string().meta({ description: "RFC 3339, UTC." });

export const ClusterIdParam = z
  .string()
  .regex(/^clu_[a-z0-9]{1,59}$/, "a cluster id: clu_ followed by lowercase letters and digits");
export const ClusterParams = z.object({ clusterId: ClusterIdParam });

/** hostname[:port]: lowercase DNS labels, an optional port 1-65535. */
export const SessionDomain = z
  .string()
  .trim()
  .toLowerCase()
  .max(259)
  .regex(
    /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*(:[0-9]{1,5})?$/,
    "a hostname, optionally with :port (no scheme, no path)",
  )
  .refine((v) => {
    const port = /:(\d+)$/.exec(v)?.[1];
    return (port === undefined || (Number(port) >= 1 && Number(port) <= 65535)) && v.replace(/:\d+$/, "").length <= 253;
  }, "the port must be 1-65535 and the hostname at most 253 characters")
  .meta({
    description:
      "Hostname (optionally :port) of the cluster's session gateway; connect links are https://{session_domain}/proxy/…",
    example: "gpu-a.sessions.example.com",
  });

export const Checks = z
  .object({
    reachable: z.boolean().meta({ description: "GET /version answered before the deadline." }),
    gpu_runtime_class: z.boolean().meta({
      description: "The RuntimeClass for GPU containers exists with the GPU handler (default nvidia/nvidia).",
    }),
    gpu_device_plugin: z.boolean().meta({
      description:
        "A DaemonSet whose name contains nvidia-device-plugin in kube-system, or a node with allocatable nvidia.com/gpu above zero.",
    }),
    credential_permissions: z
      .boolean()
      .meta({ description: "SelfSubjectAccessReviews allow every verb Berth uses on the cluster." }),
  })
  .meta({ id: "ClusterChecks" });

export const ProbeStatus = z.enum(["connected", "unreachable", "unauthorized", "degraded"]).meta({
  description:
    "connected: every check true. unreachable: no answer (refused, TLS failure, or nothing before the probe's deadline). unauthorized: the cluster answered 401 to the stored credential. degraded: reachable and authenticated, but a check is false.",
});

export const OperatorTokenMeta = z.object({ kid: z.string(), issued_at: Timestamp, expires_at: Timestamp }).meta({
  id: "OperatorTokenMetadata",
  description: "The current operator token's metadata; the token itself is shown only when issued.",
});

export const Cluster = z
  .object({
    id: z.string().meta({ example: "clu_4k2m9x0c7v5b3n6q" }),
    name: z.string(),
    session_domain: z.string(),
    status: z.enum(["connected", "unreachable", "unauthorized", "degraded", "unknown", "deregistered"]).meta({
      description:
        "The last probe's status (see the connection test); unknown before any probe; deregistered for history.",
    }),
    registered_at: Timestamp,
    deregistered_at: Timestamp.nullable(),
    inventory: z
      .object({ nodes: z.number().int(), gpus: z.number().int() })
      .meta({ description: "What the cluster's operator last reported." }),
    last_report_at: Timestamp.nullable().meta({
      description: "When the operator last reported (inventory, status or usage).",
    }),
    unreachable_since: Timestamp.nullable().meta({
      description:
        "Set by the worker when the operator has not reported for 2 minutes (null: it reports, or is deregistered); cleared at its next report.",
    }),
    checks: Checks.optional().meta({ description: "super_admin only: the last probe's checks." }),
    probed_at: Timestamp.nullable().optional().meta({ description: "super_admin only." }),
    operator_token: OperatorTokenMeta.nullable().optional().meta({ description: "super_admin only." }),
  })
  .meta({ id: "Cluster" });

export const ListClustersQuery = Page.extend({
  include_deregistered: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true")
    .meta({ description: "Also list deregistered clusters (history; super_admin only, ignored otherwise)." }),
});

export const KubeconfigCredential = z
  .object({
    kubeconfig: z.string().min(1).max(262_144).meta({
      description:
        "A kubeconfig whose current context is used; inline data only (no exec, auth-provider or file paths).",
    }),
  })
  .strict()
  .meta({ id: "KubeconfigCredential" });

export const TokenCredential = z
  .object({
    server: z.string().min(1).max(2048).meta({
      description: "https:// address of the cluster's API server.",
      example: "https://gpu-a.example.com:6443",
    }),
    ca_data: z
      .string()
      .min(1)
      .max(262_144)
      .optional()
      .meta({ description: "PEM (or base64 of PEM) of the CA that signs the API server's certificate." }),
    token: z.string().min(1).max(16_384).meta({ description: "Bearer token (e.g. a ServiceAccount token)." }),
  })
  .strict()
  .meta({ id: "TokenCredential" });

export const RegisterClusterBody = z
  .object({
    name: z.string().regex(/\S/, "not only spaces").trim().min(1).max(128),
    session_domain: SessionDomain,
    credential: z
      .union([KubeconfigCredential, TokenCredential])
      .meta({ description: "Kept in a Secret of the management cluster; never returned." }),
  })
  .meta({ id: "RegisterClusterRequest" });

export const IssuedOperatorToken = z
  .object({
    token: z.string().meta({
      description: "RS256 JWT, subject operator:<cluster_id>. Shown once: store it as the operator's token file.",
    }),
    token_type: z.literal("Bearer"),
    kid: z.string(),
    issued_at: Timestamp,
    expires_at: Timestamp,
    expires_in: z.number().int().meta({ description: "Seconds (604800: 7 days)." }),
  })
  .meta({ id: "IssuedOperatorToken" });

export const RegisteredCluster = z
  .object({ cluster: Cluster, operator_token: IssuedOperatorToken })
  .meta({ id: "RegisteredCluster" });

export const UpdateClusterBody = z
  .object({ session_domain: SessionDomain })
  .strict()
  .meta({ id: "UpdateClusterRequest" });

export const ConnectionTestBody = z.object({}).strict().optional().meta({ id: "ConnectionTestRequest" });

export const ConnectionTestResult = z
  .object({
    status: ProbeStatus,
    checks: Checks,
    probed_at: Timestamp,
    duration_ms: z.number().int(),
    server_version: z.string().optional(),
    message: z.string().optional().meta({ description: "What failed, when something did." }),
    missing_permissions: z.array(z.string()).optional(),
  })
  .meta({ id: "ConnectionTestResult" });

export const DeregistrationResult = z
  .object({
    id: z.string(),
    deregistered_at: Timestamp,
    removed: z.object({ nodes: z.number().int(), gpu_devices: z.number().int() }),
  })
  .meta({ id: "ClusterDeregistration" });
