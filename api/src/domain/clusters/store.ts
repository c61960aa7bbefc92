// What registration keeps in the management cluster: the `Cluster` custom resource (cluster-scoped,
// berth.dev/v1alpha1, named clusterResourceName(id)) and the credential Secret in `berth-system`.
// Writes happen on registration, PATCH, probes, token rotation and deregistration only — never per
// operator report.

import { type KubeApi, KubeError, seg } from "@berth/controllers/kube";
import {
  type Cluster,
  ClusterConditionType,
  ClusterKind,
  ClusterReason,
  type ClusterStatus,
  clusterResourceName,
  LABELS,
  resourcePath,
  setCondition,
} from "@berth/crds";
import {
  type ClusterCredential,
  CREDENTIAL_SECRET_KEY,
  credentialFromSecretData,
  credentialToKubeconfigText,
} from "./credential.ts";
import type { ProbeResult } from "./probe.ts";

const clusterPath = (id?: string) =>
  resourcePath(ClusterKind, id === undefined ? {} : { name: clusterResourceName(id) });
const secretPath = (namespace: string, name?: string) =>
  `/api/v1/namespaces/${seg(namespace)}/secrets${name === undefined ? "" : `/${seg(name)}`}`;

export const isKubeStatus = (e: unknown, code: number): boolean => e instanceof KubeError && e.status === code;

export function credentialSecretName(clusterId: string): string {
  return `berth-cluster-credential-${clusterResourceName(clusterId)}`;
}

/** A registered cluster's credential, from its Secret in the management cluster. */
export async function readCredential(
  management: KubeApi,
  ref: { namespace: string; name: string; key?: string | undefined },
): Promise<ClusterCredential> {
  const s = await management.json<{ data?: Record<string, string> }>("GET", secretPath(ref.namespace, ref.name));
  return credentialFromSecretData(s.data, ref.key ?? CREDENTIAL_SECRET_KEY);
}

export class ManagementStore {
  readonly #kube: KubeApi;
  /** Namespace of the credential Secrets (the control plane's own). */
  readonly namespace: string;

  /** `kube`: the management cluster's one client (ClusterClients.management). */
  constructor(kube: KubeApi, namespace: string) {
    this.#kube = kube;
    this.namespace = namespace;
  }

  // --- credential Secrets ---------------------------------------------------------------------------

  async createCredentialSecret(
    clusterId: string,
    cred: ClusterCredential,
  ): Promise<{ namespace: string; name: string; key: string }> {
    const name = credentialSecretName(clusterId);
    await this.#kube.json("POST", secretPath(this.namespace), {
      body: {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name,
          namespace: this.namespace,
          labels: { [LABELS.partOf]: "berth", [LABELS.cluster]: clusterResourceName(clusterId) },
        },
        type: "Opaque",
        data: { [CREDENTIAL_SECRET_KEY]: Buffer.from(credentialToKubeconfigText(cred), "utf8").toString("base64") },
      },
    });
    return { namespace: this.namespace, name, key: CREDENTIAL_SECRET_KEY };
  }

  readCredential(ref: { namespace: string; name: string; key?: string }): Promise<ClusterCredential> {
    return readCredential(this.#kube, ref);
  }

  async deleteCredentialSecret(ref: { namespace: string; name: string }): Promise<void> {
    try {
      await this.#kube.json("DELETE", secretPath(ref.namespace, ref.name));
    } catch (e) {
      if (!isKubeStatus(e, 404)) throw e;
    }
  }

  // --- Cluster resources ----------------------------------------------------------------------------

  async createCluster(input: {
    id: string;
    name: string;
    sessionDomain: string;
    secretRef: { namespace: string; name: string; key: string };
  }): Promise<Cluster> {
    const body = ClusterKind.build(
      { name: clusterResourceName(input.id), labels: { "app.kubernetes.io/part-of": "berth" } },
      {
        id: input.id,
        displayName: input.name,
        sessionDomain: input.sessionDomain,
        credentialSecretRef: input.secretRef,
      },
    );
    return this.#kube.json<Cluster>("POST", clusterPath(), { body });
  }

  async getCluster(id: string): Promise<Cluster | undefined> {
    try {
      return await this.#kube.json<Cluster>("GET", clusterPath(id));
    } catch (e) {
      if (isKubeStatus(e, 404)) return undefined;
      throw e;
    }
  }

  async listClusters(): Promise<Cluster[]> {
    const list = await this.#kube.json<{ items?: Cluster[] }>("GET", clusterPath());
    return list.items ?? [];
  }

  async patchSessionDomain(id: string, sessionDomain: string): Promise<Cluster> {
    return this.#kube.json<Cluster>("PATCH", clusterPath(id), { body: { spec: { sessionDomain } } });
  }

  async patchStatus(id: string, status: Partial<ClusterStatus>): Promise<Cluster> {
    return this.#kube.json<Cluster>("PATCH", `${clusterPath(id)}/status`, { body: { status } });
  }

  async deleteCluster(id: string): Promise<void> {
    try {
      await this.#kube.json("DELETE", clusterPath(id));
    } catch (e) {
      if (!isKubeStatus(e, 404)) throw e;
    }
  }
}

/** The probe as the Cluster's status records it: the result plus Reachable/Accepted conditions. */
export function statusFromProbe(
  previous: ClusterStatus | undefined,
  probe: ProbeResult,
  now: Date,
  generation?: number,
): Partial<ClusterStatus> {
  const reachable =
    probe.status === "unreachable"
      ? {
          status: "False" as const,
          reason: ClusterReason.Unreachable,
          message: probe.findings.error?.message ?? "no answer",
        }
      : probe.status === "unauthorized"
        ? {
            status: "False" as const,
            reason: ClusterReason.CredentialRejected,
            message: "the cluster answered 401 to the registered credential",
          }
        : {
            status: "True" as const,
            reason: ClusterReason.ProbeSucceeded,
            message: `apiserver ${probe.serverVersion ?? "answered"}`,
          };
  const accepted = !probe.checks.reachable
    ? { status: "Unknown" as const, reason: reachable.reason, message: "not probed: the cluster did not answer" }
    : !probe.checks.gpu_runtime_class
      ? { status: "False" as const, reason: ClusterReason.GpuRuntimeClassMissing, message: "no GPU runtime class" }
      : !probe.checks.gpu_device_plugin
        ? { status: "False" as const, reason: ClusterReason.GpuDevicePluginMissing, message: "no GPU device plugin" }
        : !probe.checks.credential_permissions
          ? {
              status: "False" as const,
              reason: ClusterReason.CredentialRejected,
              message: `missing: ${(probe.findings.missingPermissions ?? []).join(", ")}`.slice(0, 4000),
            }
          : {
              status: "True" as const,
              reason: ClusterReason.ProbeSucceeded,
              message: "GPU runtime class, device plugin and permissions present",
            };
  let conditions = setCondition(
    previous?.conditions,
    {
      type: ClusterConditionType.Reachable,
      ...reachable,
      ...(generation === undefined ? {} : { observedGeneration: generation }),
    },
    now,
  );
  conditions = setCondition(
    conditions,
    {
      type: ClusterConditionType.Accepted,
      ...accepted,
      ...(generation === undefined ? {} : { observedGeneration: generation }),
    },
    now,
  );
  return {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    conditions,
    probe: {
      status: probe.status,
      checks: { ...probe.checks },
      probedAt: `${probe.probedAt.slice(0, 19)}Z`,
      ...(probe.status === "connected" ? {} : { message: probeMessage(probe).slice(0, 4096) }),
    },
  };
}

export function probeMessage(p: ProbeResult): string {
  if (p.status === "unreachable") return `unreachable: ${p.findings.error?.message ?? "no answer"}`;
  if (p.status === "unauthorized") return "the cluster refused the credential (401)";
  const parts: string[] = [];
  if (!p.checks.gpu_runtime_class)
    parts.push(`RuntimeClass ${p.findings.runtimeClass?.name ?? ""} with the GPU handler not found`);
  if (!p.checks.gpu_device_plugin)
    parts.push("no GPU device plugin DaemonSet and no node with allocatable nvidia.com/gpu");
  if (!p.checks.credential_permissions)
    parts.push(`credential lacks: ${(p.findings.missingPermissions ?? []).join(", ")}`);
  return parts.join("; ") || "connected";
}
