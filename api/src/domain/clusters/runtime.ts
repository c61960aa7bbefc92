// Everything the clusters domain and the internal plane need beyond the common Deps, built once at
// start-up (main.ts, into deps.clusters) or by a test: the management-cluster store, the operator-token signer (its key
// loaded from, or created in, the management cluster), the probe's settings and the live-work check.

import type { Logger } from "pino";
import type { Config } from "../../config.ts";
import type { Db } from "../../db/knex.ts";
import { hasLiveSessions } from "../../db/operations/clusters/hasLiveSessions.ts";
import { Unavailable } from "../../errors.ts";
import { controlPlaneRbac, DEFAULT_TARGET_NAMESPACES, type TargetNamespaces } from "../../rbac.ts";
import type { ClusterClients } from "./clients.ts";
import type { ClusterCredential } from "./credential.ts";
import { OPERATOR_TOKEN_TTL_SECONDS, OperatorTokens } from "./operatorToken.ts";
import { clientOptionsForProbe, type ProbeResult, probeCluster } from "./probe.ts";
import { loadOrCreateSigningKey, SIGNING_KEY_SECRET, type SigningKey } from "./signingKey.ts";
import { ManagementStore } from "./store.ts";

export interface ClustersOptions {
  /** Registration and connection-test probe deadline. The contract: "about two minutes". */
  probeTimeoutMs: number;
  /** The RuntimeClass session pods use, and the handler it must have. */
  runtimeClassName: string;
  runtimeClassHandler: string;
  /** Namespaces on the GPU clusters. */
  targetNamespaces: TargetNamespaces;
  /** The control plane's namespace in the management cluster: credential Secrets and the signing key. */
  controlPlaneNamespace: string;
  signingKeySecret: string;
  operatorTokenTtlSeconds: number;
}

export const DEFAULT_CLUSTERS_OPTIONS: ClustersOptions = {
  probeTimeoutMs: 120_000,
  runtimeClassName: "nvidia",
  runtimeClassHandler: "nvidia",
  targetNamespaces: DEFAULT_TARGET_NAMESPACES,
  controlPlaneNamespace: "berth-system",
  signingKeySecret: SIGNING_KEY_SECRET,
  operatorTokenTtlSeconds: OPERATOR_TOKEN_TTL_SECONDS,
};

/** The settings of config.ts (BERTH_CLUSTER_PROBE_TIMEOUT_SECONDS, BERTH_GPU_RUNTIME_*, namespaces). */
export function clustersOptionsFrom(c: Config["clusters"]): Partial<ClustersOptions> {
  return {
    probeTimeoutMs: c.probeTimeoutMs,
    runtimeClassName: c.runtimeClassName,
    runtimeClassHandler: c.runtimeClassHandler,
    targetNamespaces: { ...DEFAULT_TARGET_NAMESPACES, sessions: c.sessionsNamespace },
    controlPlaneNamespace: c.systemNamespace,
  };
}

/** "Does anything still run on this cluster?" — deregistration is refused while it answers true. */
export type HasLiveWork = (clusterId: string) => Promise<boolean>;

export interface ClustersRuntime {
  options: ClustersOptions;
  store: ManagementStore;
  /** The process's Kubernetes clients: a registered cluster's kept client (node actions, logs, builds). */
  clients: ClusterClients;
  tokens: OperatorTokens;
  hasLiveWork: HasLiveWork;
  probe(cred: ClusterCredential): Promise<ProbeResult>;
}

export interface CreateClustersRuntimeInput {
  /** The process's Kubernetes clients (the composition root's; api/src/buildDeps.ts: makeClusterClients). */
  clients: ClusterClients;
  db: Db;
  clock: { now(): Date };
  log?: Logger;
  options?: Partial<ClustersOptions>;
  /** Default: rows of a `sessions` table in a live phase (db/operations/clusters/hasLiveSessions.ts). */
  hasLiveWork?: HasLiveWork;
  /** Tests: a key made in-process instead of the management cluster's Secret. */
  signingKey?: SigningKey;
}

/** Loads (or on first start creates) the signing key; call once per process. */
export async function createClustersRuntime(input: CreateClustersRuntimeInput): Promise<ClustersRuntime> {
  const options = { ...DEFAULT_CLUSTERS_OPTIONS, ...input.options };
  const key =
    input.signingKey ??
    (await loadOrCreateSigningKey({
      kube: input.clients.management,
      namespace: options.controlPlaneNamespace,
      name: options.signingKeySecret,
      ...(input.log ? { log: input.log } : {}),
    }));
  const tokens = new OperatorTokens({ key, clock: input.clock, ttlSeconds: options.operatorTokenTtlSeconds });
  const rbac = controlPlaneRbac(options.targetNamespaces);
  return {
    options,
    store: new ManagementStore(input.clients.management, options.controlPlaneNamespace),
    clients: input.clients,
    tokens,
    hasLiveWork: input.hasLiveWork ?? ((clusterId) => hasLiveSessions(input.db, clusterId)),
    probe: async (cred) => {
      const probe = {
        timeoutMs: options.probeTimeoutMs,
        runtimeClassName: options.runtimeClassName,
        runtimeClassHandler: options.runtimeClassHandler,
        devicePluginNamespace: options.targetNamespaces.devicePlugin,
        rbac,
      };
      // A credential under test is not registered: a client of its own, closed when the probe is done.
      const kube = input.clients.forCredential(cred, clientOptionsForProbe(probe));
      try {
        return await probeCluster(kube, probe, () => input.clock.now());
      } finally {
        kube.close();
      }
    },
  };
}

/** The runtime from Deps; 503 when the process runs without a management cluster. */
export function clustersOf(deps: { clusters?: ClustersRuntime | undefined }): ClustersRuntime {
  if (!deps.clusters)
    throw new Unavailable("cluster management is not configured (no management cluster: set BERTH_KUBECONFIG)");
  return deps.clusters;
}
