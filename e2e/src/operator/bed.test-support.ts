// One GPU cluster of the test bed set up the way registration will set it up for the operator: the
// namespaces, and a ServiceAccount holding exactly the rules of rbac.ts (a ClusterRole, a Role in
// berth-system minted with mintCredential, and the session-namespace Role applied next to it). Tests run
// the operator with that least-privilege kubeconfig, never with admin.
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ImageBuildKind, resourcePath } from "@berth/crds";
import { loadCrds } from "@berth/crds/manifests";
import { type OperatorConfig, operatorRbac, parseConfig } from "@berth/operator";
import { type Cluster, type Fleet, type GpuNodeDescription, KubeHttp, startFleet } from "../index.ts";

export const H100 = "NVIDIA-H100-80GB-HBM3";
export const A100 = "NVIDIA-A100-SXM4-80GB";
export const SYSTEM_NS = "berth-system";
export const SESSIONS_NS = "berth-sessions";
/** The one lease name the operator's Role allows (resourceNames). */
export const LEASE = "berth-operator";

/** Lease timings (duration, renew deadline) for tests that are not about failover: long, so that a busy
 * machine stalling the event loop for seconds does not cost the lease and start a second leader term. */
export const STEADY_LEASE = { durationMs: 15_000, renewDeadlineMs: 10_000 } as const;
/** Short timings for the failover tests, which wait the lease out. */
export const FAILOVER_LEASE = { durationMs: 3_000, renewDeadlineMs: 2_000 } as const;

export interface Bed {
  fleet: Fleet;
  gpu: Cluster;
  admin: KubeHttp;
  /** The operator's least-privilege kubeconfig. */
  kubeconfigPath: string;
  dir: string;
  /** Writes a token file the way a Secret volume updates (write aside, rename over); returns its path. */
  writeToken(name: string, token: string): string;
  /** A fast configuration for tests: short debounce, small backoff cap; STEADY_LEASE unless `lease` is given. */
  config(over: {
    identity: string;
    tokenFile: string;
    controlPlaneUrl: string;
    clusterId?: string;
    resyncMs?: number;
    lease?: { durationMs: number; renewDeadlineMs: number };
    buildsNamespace?: string;
  }): OperatorConfig;
  stop(): Promise<void>;
}

/** With `builds`, the cluster is also a build cluster: the ImageBuild CRD, BUILDS_NS and its grants. */
export const BUILDS_NS = "berth-builds";

export async function startBed(nodes: GpuNodeDescription[], opts: { builds?: boolean } = {}): Promise<Bed> {
  const fleet = await startFleet({
    clusters: [{ name: "gpu", kind: "gpu", nodes, gpuRuntimeClass: true, gpuDevicePlugin: true }],
  });
  try {
    const gpu = fleet.cluster("gpu");
    const admin = new KubeHttp({ server: gpu.server, caPem: gpu.caPem, token: gpu.adminToken });
    const rbac = operatorRbac({
      systemNamespace: SYSTEM_NS,
      sessionsNamespace: SESSIONS_NS,
      leaseName: LEASE,
      ...(opts.builds ? { buildsNamespace: BUILDS_NS } : {}),
    });
    if (opts.builds) {
      const crd = loadCrds().find((c) => c.metadata.name === ImageBuildKind.crdName);
      await admin.ensure("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    }
    for (const ns of [SYSTEM_NS, SESSIONS_NS, ...(opts.builds ? [BUILDS_NS] : [])])
      await admin.ensure("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    if (opts.builds)
      await eventually(
        () =>
          admin.json("GET", resourcePath(ImageBuildKind, { namespace: BUILDS_NS })).then(
            () => true,
            () => undefined,
          ),
        "the ImageBuild CRD served",
      );
    const system = rbac.namespaceRules.find((n) => n.namespace === SYSTEM_NS);
    const cred = await gpu.mintCredential({
      name: "berth-operator",
      namespace: SYSTEM_NS,
      clusterRules: rbac.clusterRules,
      rules: system?.rules ?? [],
    });
    // mintCredential binds one namespace; the other Role of rbac.ts is applied the same way by hand.
    for (const { namespace, rules } of rbac.namespaceRules.filter((n) => n.namespace !== SYSTEM_NS)) {
      const r = "/apis/rbac.authorization.k8s.io/v1";
      await admin.json("POST", `${r}/namespaces/${namespace}/roles`, {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: "berth-operator" },
        rules,
      });
      await admin.json("POST", `${r}/namespaces/${namespace}/rolebindings`, {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "berth-operator" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "berth-operator" },
        subjects: [{ kind: "ServiceAccount", name: cred.serviceAccount, namespace: cred.namespace }],
      });
    }
    const dir = mkdtempSync(join(tmpdir(), "berth-operator-bed-"));
    const kubeconfigPath = join(dir, "kubeconfig");
    writeFileSync(kubeconfigPath, cred.kubeconfig);
    const writeToken = (name: string, token: string) => {
      const path = join(dir, name);
      writeFileSync(`${path}.new`, token);
      renameSync(`${path}.new`, path);
      return path;
    };
    return {
      fleet,
      gpu,
      admin,
      kubeconfigPath,
      dir,
      writeToken,
      config: (o) =>
        parseConfig({
          clusterId: o.clusterId ?? "clu_bed",
          kube: { mode: "kubeconfig", path: kubeconfigPath },
          controlPlaneUrl: o.controlPlaneUrl,
          tokenFile: o.tokenFile,
          requestTimeoutMs: 3_000,
          http: { host: "127.0.0.1", port: 0 },
          lease: {
            namespace: SYSTEM_NS,
            name: LEASE,
            identity: o.identity,
            ...(o.lease ?? STEADY_LEASE),
            retryPeriodMs: 250,
          },
          inventory: { debounceMs: 100, resyncMs: o.resyncMs ?? 60_000, listPageSize: 500 },
          backoff: { baseMs: 100, maxMs: 1_000, jitter: 0.5 },
          ...(o.buildsNamespace ? { builds: { namespace: o.buildsNamespace } } : {}),
          logLevel: "debug",
        }),
      stop: async () => {
        admin.close();
        await fleet.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await fleet.stop();
    throw e;
  }
}

/** Polls until `probe` returns a value; fails with `what` and the last value seen. */
export async function eventually<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
