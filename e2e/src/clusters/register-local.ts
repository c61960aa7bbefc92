// `npm start`: register the bed's GPU clusters with the running API (in-process deps), each with a
// least-privilege credential minted on that cluster, and write each operator token to a file the
// operator reads (mode 0600). Safe to run at every start: Postgres may remember registrations of a
// previous run whose clusters (and management cluster) are gone; those are closed as deregistered and
// the cluster is registered anew, and a registration that is still live gets a fresh token.
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Deps } from "@berth/api";
import type { ClusterRow, Principal } from "@berth/api/testing";
import {
  clustersOf,
  deleteClusterInventory,
  deregisterCluster,
  markClusterDeregistered,
  registerCluster,
  rotateOperatorToken,
} from "@berth/api/testing";
import type { Fleet } from "../testbed/types.ts";
import { mintControlPlaneCredential, mintServiceAccountCredential, type ServiceAccountRules } from "./credentials.ts";

/** Who `npm start` acts as: recorded as the registering user in history and audit. */
export const LOCAL_START_PRINCIPAL: Principal = {
  userId: "system:npm-start",
  email: "npm-start@berth.local",
  isSuperAdmin: true,
  mustChangePassword: false,
  memberships: [],
};

export interface LocalRegistration {
  cluster: string;
  clusterId: string;
  sessionDomain: string;
  /** The operator's token file (re-read by the operator on every attempt). */
  tokenFile: string;
  tokenExpiresAt: string;
  /** The operator's own kubeconfig for its cluster, when `operator` was given. */
  operatorKubeconfigFile?: string;
}

export interface RegisterLocalOptions {
  deps: Deps;
  fleet: Fleet;
  /** Where token files go, e.g. .data/operators */
  dataDir: string;
  /** Default: `<cluster>.sessions.localhost`. */
  sessionDomain?: (cluster: string) => string;
  /**
   * Also install the operator's ServiceAccount and rules on each cluster (as its install would: the
   * control plane's credential may not grant RBAC) and write its kubeconfig. Pass operator/src/rbac.ts'
   * `operatorRbac()`.
   */
  operator?: { rbac: ServiceAccountRules; name?: string; namespace?: string };
  log?: (line: string) => void;
}

export async function registerLocalGpuClusters(opts: RegisterLocalOptions): Promise<LocalRegistration[]> {
  const { deps } = opts;
  const rt = clustersOf(deps);
  mkdirSync(opts.dataDir, { recursive: true });
  const out: LocalRegistration[] = [];
  for (const cluster of opts.fleet.clusters.filter((c) => c.kind === "gpu")) {
    const sessionDomain = opts.sessionDomain?.(cluster.name) ?? `${cluster.name}.sessions.localhost`;
    const live = (await deps.db("clusters").where({ name: cluster.name }).whereNull("deregistered_at").first()) as
      | ClusterRow
      | undefined;
    let clusterId: string;
    let token: { token: string; expiresAt: Date };
    if (live && (await rt.store.getCluster(live.id))) {
      clusterId = live.id;
      token = await rotateOperatorToken(deps, LOCAL_START_PRINCIPAL, clusterId);
      opts.log?.(`cluster ${cluster.name}: already registered as ${clusterId}; operator token rotated`);
    } else {
      if (live) {
        // The management cluster forgot it (a fresh bed): close the old record, keep its history.
        await deps.db.transaction(async (tx) => {
          await markClusterDeregistered(tx, live.id, LOCAL_START_PRINCIPAL.userId, deps.clock.now());
          await deleteClusterInventory(tx, live.id);
        });
        opts.log?.(
          `cluster ${cluster.name}: previous registration ${live.id} is gone from the management cluster; closed`,
        );
      }
      const cred = await mintControlPlaneCredential(cluster, { name: "berth-control-plane" });
      const r = await registerCluster(deps, LOCAL_START_PRINCIPAL, {
        name: cluster.name,
        session_domain: sessionDomain,
        credential: { server: cluster.server, ca_data: cluster.caPem, token: cred.token },
      });
      clusterId = r.view.row.id;
      token = r.token;
      opts.log?.(
        `cluster ${cluster.name}: registered as ${clusterId} (probe ${r.probe.status} in ${r.probe.durationMs} ms)`,
      );
    }
    const tokenFile = join(opts.dataDir, `operator-token-${cluster.name}`);
    writeFileSync(tokenFile, `${token.token}\n`, { mode: 0o600 });
    chmodSync(tokenFile, 0o600);
    let operatorKubeconfigFile: string | undefined;
    if (opts.operator) {
      const op = await mintServiceAccountCredential(cluster, {
        name: opts.operator.name ?? "berth-operator",
        namespace: opts.operator.namespace ?? "berth-system",
        ...opts.operator.rbac,
      });
      operatorKubeconfigFile = join(opts.dataDir, `operator-kubeconfig-${cluster.name}.yaml`);
      writeFileSync(operatorKubeconfigFile, op.kubeconfig, { mode: 0o600 });
    }
    out.push({
      cluster: cluster.name,
      clusterId,
      sessionDomain,
      tokenFile,
      tokenExpiresAt: token.expiresAt.toISOString(),
      ...(operatorKubeconfigFile ? { operatorKubeconfigFile } : {}),
    });
  }
  return out;
}

/** Deregisters what `registerLocalGpuClusters` registered (an orderly `npm start` shutdown may call it). */
export async function deregisterLocalGpuClusters(
  deps: Deps,
  registrations: readonly LocalRegistration[],
): Promise<void> {
  for (const r of registrations) await deregisterCluster(deps, LOCAL_START_PRINCIPAL, r.clusterId);
}
