import { z } from "zod";
import { ClusterId, DisplayName, HostnamePort, immutable, ResourceName, Timestamp } from "../fields.ts";
import { defineKind, statusOf } from "../kind.ts";

export const ClusterConditionType = {
  /** The last probe reached the cluster's apiserver with its credential. */
  Reachable: "Reachable",
  /** The probe found a GPU runtime class and the GPU device plugin. */
  Accepted: "Accepted",
  /** The operator reported recently with a valid token. */
  OperatorReporting: "OperatorReporting",
  /** Sessions may be placed here. */
  Ready: "Ready",
} as const;

export const ClusterReason = {
  ProbeSucceeded: "ProbeSucceeded",
  Unreachable: "Unreachable",
  CredentialRejected: "CredentialRejected",
  GpuRuntimeClassMissing: "GpuRuntimeClassMissing",
  GpuDevicePluginMissing: "GpuDevicePluginMissing",
  Reporting: "Reporting",
  ReportsStopped: "ReportsStopped",
  TokenExpired: "TokenExpired",
} as const;

export const ClusterSpec = z.object({
  /** `clu_<id>`; a re-registration is a new Cluster with a new id. */
  id: immutable(ClusterId),
  displayName: DisplayName,
  /** Hostname (optionally :port) of the cluster's session gateway; connect links are https://{sessionDomain}/proxy/… */
  sessionDomain: HostnamePort,
  /** The Secret (in the control plane's namespace) holding the kubeconfig used to reach the cluster. */
  credentialSecretRef: z.object({
    namespace: ResourceName,
    name: ResourceName,
    key: z.string().min(1).max(253).default("kubeconfig"),
  }),
});
export type ClusterSpec = z.infer<typeof ClusterSpec>;

export const ClusterStatus = statusOf({
  probe: z
    .object({
      /** As the connection test answers: degraded = reachable and authenticated, some check false. */
      status: z.enum(["connected", "unreachable", "unauthorized", "degraded"]),
      /** Named booleans, as the connection-test endpoint returns them. */
      checks: z.record(z.string(), z.boolean()).default({}),
      probedAt: Timestamp,
      message: z.string().max(4096).optional(),
    })
    .optional(),
  /** The current operator token's metadata; the token itself is never stored in a resource. */
  operatorToken: z
    .object({
      kid: z.string().min(1).max(128),
      issuedAt: Timestamp,
      expiresAt: Timestamp,
    })
    .optional(),
});
export type ClusterStatus = z.infer<typeof ClusterStatus>;

export const ClusterKind = defineKind({
  kind: "Cluster",
  plural: "clusters",
  shortNames: ["bcl"],
  namespaced: false,
  description: "A registered GPU cluster. Named clusterResourceName(spec.id), since ids hold an underscore.",
  spec: ClusterSpec,
  status: ClusterStatus,
  printerColumns: [
    { name: "ID", type: "string", jsonPath: ".spec.id" },
    { name: "Display Name", type: "string", jsonPath: ".spec.displayName" },
    { name: "Session Domain", type: "string", jsonPath: ".spec.sessionDomain" },
    { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: "Token Expires", type: "date", jsonPath: ".status.operatorToken.expiresAt", priority: 1 },
  ],
});
export const Cluster = ClusterKind.schema;
export type Cluster = z.infer<typeof Cluster>;
