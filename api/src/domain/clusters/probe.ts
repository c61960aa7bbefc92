// The probe run before a cluster is accepted and by the connection test.
//
// What counts (in this order; one deadline covers the whole probe):
// - reachable: `GET /version` answers with any HTTP status before the deadline. A refused connection,
//   an unknown host or a certificate that does not verify fails at once; an address that accepts and never
//   answers (or drops packets) fails when the deadline passes (default 120 s, `probeTimeoutMs`).
// - credential valid: that answer is not 401.
// - gpu_runtime_class: the `node.k8s.io/v1` RuntimeClass named `runtimeClassName` (default `nvidia`)
//   exists and its handler is `runtimeClassHandler` (default `nvidia`).
// - gpu_device_plugin: a DaemonSet in the device-plugin namespace (default `kube-system`) whose name
//   contains `nvidia-device-plugin` (or HAMi's `hami-device-plugin`: docs/dev/gpu-sharing.md), OR at least one node whose `status.allocatable["nvidia.com/gpu"]` is
//   above zero. The second covers installs that run the plugin elsewhere (the GPU Operator's namespace):
//   only a running device plugin advertises that resource, so a node that has it is evidence of one.
// - credential_permissions: a SelfSubjectAccessReview allows every verb of `controlPlaneRbac()`.
import { type HttpKubeOptions, type KubeApi, KubeTransportError, seg } from "@berth/controllers/kube";
import { GPU_RESOURCE, HAMI } from "@berth/crds";
import type { ControlPlaneRbac } from "../../rbac.ts";
import { describePermission, type Permission, permissionsOf } from "./permissions.ts";

export const DEVICE_PLUGIN_NAME_FRAGMENT = "nvidia-device-plugin";
/** DaemonSet names of the GPU device plugins recognised: NVIDIA's, and the sharing layer HAMi's. */
export const DEVICE_PLUGIN_NAME_FRAGMENTS = [DEVICE_PLUGIN_NAME_FRAGMENT, HAMI.devicePluginDaemonSet];

export interface ProbeOptions {
  timeoutMs: number;
  runtimeClassName: string;
  runtimeClassHandler: string;
  devicePluginNamespace: string;
  rbac: ControlPlaneRbac;
}

export interface ProbeChecks {
  reachable: boolean;
  gpu_runtime_class: boolean;
  gpu_device_plugin: boolean;
  credential_permissions: boolean;
}

/**
 * `connected`: every check true. `unreachable`: no answer (refused, TLS, deadline). `unauthorized`: the
 * cluster answered 401 to the credential. `degraded`: reachable and authenticated, some check false.
 */
export type ProbeStatus = "connected" | "unreachable" | "unauthorized" | "degraded";

export interface ProbeResult {
  status: ProbeStatus;
  checks: ProbeChecks;
  /** ISO time the probe finished. */
  probedAt: string;
  durationMs: number;
  serverVersion?: string;
  /** What was found, so a refusal says what to fix. */
  findings: {
    runtimeClass?: { name: string; handler?: string; found: boolean };
    devicePlugin?: { daemonSets: string[]; gpuNodes: number; how: "daemonset" | "allocatable" | "none" };
    missingPermissions?: string[];
    /** Transport failure of an unreachable cluster: ECONNREFUSED, TIMEOUT, a TLS code, ... */
    error?: { reason: string; message: string };
  };
}

const NO_CHECKS: ProbeChecks = {
  reachable: false,
  gpu_runtime_class: false,
  gpu_device_plugin: false,
  credential_permissions: false,
};

/**
 * Probes the cluster behind `kube`, a client of the credential under test whose per-request timeout is past
 * `opts.timeoutMs` (clientOptionsForProbe): the probe's one deadline (the signal) decides.
 */
export async function probeCluster(
  kube: KubeApi,
  opts: ProbeOptions,
  clock: () => Date = () => new Date(),
): Promise<ProbeResult> {
  const started = Date.now();
  const signal = AbortSignal.timeout(opts.timeoutMs);
  const done = (
    status: ProbeStatus,
    checks: ProbeChecks,
    findings: ProbeResult["findings"],
    serverVersion?: string,
  ): ProbeResult => ({
    status,
    checks,
    probedAt: clock().toISOString(),
    durationMs: Date.now() - started,
    ...(serverVersion ? { serverVersion } : {}),
    findings,
  });
  try {
    const version = await kube.request<{ gitVersion?: string }>("GET", "/version", { signal });
    if (version.status === 401) return done("unauthorized", { ...NO_CHECKS, reachable: true }, {});
    const serverVersion = version.status === 200 ? version.body?.gitVersion : undefined;

    const [runtimeClass, devicePlugin, missing] = await Promise.all([
      checkRuntimeClass(kube, opts, signal),
      checkDevicePlugin(kube, opts, signal),
      missingPermissions(kube, permissionsOf(opts.rbac), signal),
    ]);
    const checks: ProbeChecks = {
      reachable: true,
      gpu_runtime_class: runtimeClass.found,
      gpu_device_plugin: devicePlugin.how !== "none",
      credential_permissions: missing.length === 0,
    };
    const all = Object.values(checks).every(Boolean);
    return done(
      all ? "connected" : "degraded",
      checks,
      { runtimeClass, devicePlugin, ...(missing.length ? { missingPermissions: missing } : {}) },
      serverVersion,
    );
  } catch (e) {
    if (e instanceof KubeTransportError)
      return done("unreachable", NO_CHECKS, { error: { reason: e.reason, message: e.message } });
    throw e;
  }
}

/** The client a probe is given: its per-request timeout leaves the deadline to the probe's signal. */
export function clientOptionsForProbe(opts: Pick<ProbeOptions, "timeoutMs">): HttpKubeOptions {
  return { maxSockets: 8, requestTimeoutMs: opts.timeoutMs + 1_000 };
}

async function checkRuntimeClass(kube: KubeApi, opts: ProbeOptions, signal: AbortSignal) {
  const res = await kube.request<{ handler?: string }>(
    "GET",
    `/apis/node.k8s.io/v1/runtimeclasses/${seg(opts.runtimeClassName)}`,
    { signal },
  );
  if (res.status !== 200) return { name: opts.runtimeClassName, found: false };
  const handler = res.body?.handler;
  return { name: opts.runtimeClassName, handler, found: handler === opts.runtimeClassHandler };
}

interface NamedList {
  items?: { metadata?: { name?: string }; status?: { allocatable?: Record<string, string> } }[];
  metadata?: { continue?: string };
}

async function checkDevicePlugin(kube: KubeApi, opts: ProbeOptions, signal: AbortSignal) {
  const ds = await kube.request<NamedList>(
    "GET",
    `/apis/apps/v1/namespaces/${seg(opts.devicePluginNamespace)}/daemonsets`,
    { signal },
  );
  const daemonSets =
    ds.status === 200
      ? (ds.body.items ?? [])
          .map((i) => i.metadata?.name ?? "")
          .filter((n) => DEVICE_PLUGIN_NAME_FRAGMENTS.some((f) => n.includes(f)))
      : [];
  if (daemonSets.length > 0) return { daemonSets, gpuNodes: 0, how: "daemonset" as const };
  let gpuNodes = 0;
  let cont: string | undefined;
  do {
    const q = new URLSearchParams({ limit: "500", ...(cont ? { continue: cont } : {}) });
    const res = await kube.request<NamedList>("GET", `/api/v1/nodes?${q}`, { signal });
    if (res.status !== 200) break;
    gpuNodes += (res.body.items ?? []).filter((n) => gpuQuantity(n.status?.allocatable?.[GPU_RESOURCE]) > 0).length;
    cont = res.body.metadata?.continue || undefined;
  } while (cont && gpuNodes === 0);
  return { daemonSets, gpuNodes, how: gpuNodes > 0 ? ("allocatable" as const) : ("none" as const) };
}

/** `nvidia.com/gpu` is a count: "8", occasionally "8000m"; anything else reads as zero. */
export function gpuQuantity(q: string | undefined): number {
  if (!q) return 0;
  const m = /^(\d+)(m?)$/.exec(q.trim());
  if (!m?.[1]) return 0;
  return m[2] ? Math.floor(Number(m[1]) / 1000) : Number(m[1]);
}

export async function missingPermissions(kube: KubeApi, wanted: Permission[], signal: AbortSignal): Promise<string[]> {
  const results = await Promise.all(
    wanted.map(async (p) => {
      const res = await kube.request<{ status?: { allowed?: boolean } }>(
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        {
          body: {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SelfSubjectAccessReview",
            spec: {
              resourceAttributes: {
                verb: p.verb,
                group: p.group,
                resource: p.resource,
                subresource: p.subresource,
                namespace: p.namespace,
              },
            },
          },
          signal,
        },
      );
      return res.status === 201 || res.status === 200 ? res.body.status?.allowed === true : false;
    }),
  );
  return wanted.filter((_, i) => !results[i]).map(describePermission);
}
