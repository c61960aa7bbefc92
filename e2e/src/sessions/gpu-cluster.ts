// A GPU cluster joined to the sessions bed: its operator's install, the cluster registered through the
// API (the control plane's credential, the operator's token in a file), and a handle that starts its
// operator, again after a crash or as a standby, against the bed's internal plane.
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { controlPlaneRbac } from "@berth/api/rbac";
import { parseConfig, type RunningOperator, startOperator } from "@berth/operator";
import type { Logger } from "pino";
import { apiAs } from "../api-client.ts";
import { mintControlPlaneCredential } from "../clusters/credentials.ts";
import type { Cluster, Credential } from "../index.ts";
import { installOperator } from "./operator-install.ts";

export interface GpuClusterHandle {
  name: string;
  id: string;
  cluster: Cluster;
  tokenFile: string;
  kubeconfigPath: string;
  operator: RunningOperator | undefined;
  /** Starts (again) this cluster's operator. */
  startOperator(identity?: string): Promise<RunningOperator>;
}

/** How the bed runs each GPU cluster's operator. */
export interface BedOperatorOptions {
  /** Operators' inventory resync (a heartbeat); default 2 s so that a silent cluster shows within the test. */
  operatorResyncMs?: number;
  /** Operators' inventory debounce; default 50 ms (tests), production 500 ms. */
  operatorDebounceMs?: number;
  /** Operators' usage interval (one sample per session pod and interval); default 60 s, as in production. */
  operatorUsageIntervalMs?: number;
  /** Operators' volume-sync tick (storage capacity reports); default 30 s, as in production. */
  operatorStorageIntervalMs?: number;
  /** Operators' GPU metrics source (a DCGM exporter's metrics URL, scraped every `intervalMs`); default none. */
  operatorGpuMetrics?: { url: string; intervalMs: number };
  /** How long a started session app may take to become Ready before its session fails; default 10 min. */
  operatorAppReadyTimeoutMs?: number;
  /** Operators' idle-rule probe interval (notebook and GPU signals); default 30 s, as in production. */
  operatorActivityIntervalMs?: number;
  /** Image builds on these clusters' operators (BERTH_OPERATOR_BUILDS_*), by cluster name. */
  operatorBuilds?: Record<string, { namespace: string; nodeSelector: string }>;
}

export interface JoinGpuCluster {
  cluster: Cluster;
  /** Where the operator's kubeconfig and token files go. */
  dir: string;
  apiUrl: string;
  superAdminToken: string;
  /** The internal plane the operator reports to. */
  planeUrl: string;
  log: Logger;
  operator: BedOperatorOptions;
  /** A test's accounts on this cluster; default: minted from the rule lists. */
  given?: { operator: Credential; controlPlane: Credential };
}

/** Installs, registers and hands back the cluster; its operator is not started yet. */
export async function joinGpuCluster(o: JoinGpuCluster): Promise<GpuClusterHandle> {
  const { cluster: c, operator } = o;
  const kubeconfigPath = await installOperator(c, o.dir, o.given?.operator);
  const cpCred =
    o.given?.controlPlane ??
    (await mintControlPlaneCredential(c, { name: "berth-control-plane", rbac: controlPlaneRbac() }));
  const registered = await apiAs(o.apiUrl, o.superAdminToken)
    .call("registerCluster", {
      body: {
        name: c.name,
        session_domain: `${c.name}.sessions.localhost`,
        credential: { server: c.server, ca_data: c.caPem, token: cpCred.token },
      },
    })
    .catch((e: unknown) => {
      throw new Error(`registering ${c.name}: ${(e as Error).message}`, { cause: e });
    });
  const tokenFile = join(o.dir, `token-${c.name}`);
  writeFileSync(`${tokenFile}.new`, registered.operator_token.token);
  renameSync(`${tokenFile}.new`, tokenFile);
  const h: GpuClusterHandle = {
    name: c.name,
    id: registered.cluster.id,
    cluster: c,
    tokenFile,
    kubeconfigPath,
    operator: undefined,
    async startOperator(identity = `${c.name}-op-${Math.random().toString(36).slice(2, 6)}`) {
      const op = await startOperator(
        parseConfig({
          clusterId: h.id,
          kube: { mode: "kubeconfig", path: kubeconfigPath },
          controlPlaneUrl: o.planeUrl,
          tokenFile,
          requestTimeoutMs: 5_000,
          http: { host: "127.0.0.1", port: 0 },
          // Short for quick failovers, with room for a slow renewal on a loaded machine (a 2 s deadline
          // made a standby flap there instead of leading).
          lease: { identity, durationMs: 5_000, renewDeadlineMs: 4_000, retryPeriodMs: 250 },
          inventory: {
            debounceMs: operator.operatorDebounceMs ?? 50,
            resyncMs: operator.operatorResyncMs ?? 2_000,
            listPageSize: 500,
          },
          usage: { intervalMs: operator.operatorUsageIntervalMs ?? 60_000, graceMs: 200 },
          storage: { intervalMs: operator.operatorStorageIntervalMs ?? 30_000 },
          ...(operator.operatorAppReadyTimeoutMs !== undefined
            ? { sessions: { appReadyTimeoutMs: operator.operatorAppReadyTimeoutMs } }
            : {}),
          ...(operator.operatorActivityIntervalMs !== undefined
            ? { activity: { intervalMs: operator.operatorActivityIntervalMs } }
            : {}),
          ...(operator.operatorGpuMetrics
            ? { gpuMetrics: { ...operator.operatorGpuMetrics, timeoutMs: 1_000, retentionMs: 600_000 } }
            : {}),
          ...(operator.operatorBuilds?.[c.name] ? { builds: operator.operatorBuilds[c.name] } : {}),
          backoff: { baseMs: 100, maxMs: 1_000, jitter: 0.5 },
          logLevel: "silent",
        }),
        { log: o.log },
      );
      h.operator = op;
      return op;
    },
  };
  return h;
}
