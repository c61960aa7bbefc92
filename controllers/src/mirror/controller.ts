// The GPU-cluster side: turns each SessionMirror in the sessions namespace into its Pod, Service and
// NetworkPolicy (mirror/plan.ts decides; this file observes and applies) and reports every change of
// phase to the control plane's internal plane. The operator process runs it while it leads
// (startSessionMirrorController), next to its inventory reporter.
//
// Reports: POST /internal/v1/sessions/status with {session: <ses_ id>, phase, node, reason, message,
// observed_generation: <the mirror's spec.revision>, at}. A change is sent within `reportDebounceMs`;
// every mirror's state is sent again each `resyncMs` (an empty batch when there is none), which is also
// the heartbeat by which the control plane knows the cluster is alive. A failed batch is retried with
// backoff; a newer state of a session replaces an older one still waiting to be sent.
import { type SessionMirror, SessionMirrorKind } from "@berth/crds";
import type { Logger } from "pino";
import type { KubeApi } from "../kube/client.ts";
import { Informer, type KubeObject } from "../kube/informer.ts";
import { WorkQueue } from "../kube/workqueue.ts";
import { DEFAULT_SESSIONS_NAMESPACE, LABELS } from "../sessions/names.ts";
import type { MirrorManifestOptions } from "./manifests.ts";
import { type MirrorAction, type MirrorReport, type ObjectView, type PodView, planMirror } from "./plan.ts";
import { type GpuUsageSource, type MeteredPodView, podRun, UsageMeter, type UsageSample } from "./usage.ts";

export interface WireStatusReport {
  session: string;
  phase: string;
  node?: string | null;
  gpu_devices?: unknown[] | null;
  reason: string;
  message: string;
  observed_generation: number;
  at: string;
}

export interface MirrorControllerOptions {
  namespace: string;
  gatewayNamespace?: string;
  gatewayPodLabels?: Record<string, string>;
  runtimeClassName?: string;
  concurrency: number;
  resyncMs: number;
  reportDebounceMs: number;
  reportBatch: number;
  /** Also write the mirror's status (phase, pod, node) on a change of phase, for `kubectl get sesm`. */
  writeStatus: boolean;
  /** Length of a usage interval (mirror/usage.ts); a whole number of seconds. */
  usageIntervalMs: number;
  /** A closed usage interval is sent this long after its end. */
  usageGraceMs: number;
}

export const DEFAULT_MIRROR_OPTIONS: MirrorControllerOptions = {
  namespace: DEFAULT_SESSIONS_NAMESPACE,
  concurrency: 32,
  resyncMs: 20_000,
  reportDebounceMs: 50,
  reportBatch: 1000,
  writeStatus: false,
  usageIntervalMs: 60_000,
  usageGraceMs: 2_000,
};

export interface MirrorControllerDeps {
  /** The GPU cluster (the operator's own client fits this interface). */
  kube: KubeApi;
  clusterId: string;
  /** Sends one batch; throws when the control plane did not take it (the batch is retried). */
  report(reports: WireStatusReport[]): Promise<void>;
  /**
   * Sends one batch of usage samples; throws when the control plane did not take it (retried), or
   * `UsageRefused` naming sessions it will never take (dropped). Without it nothing is metered.
   */
  reportUsage?(samples: UsageSample[]): Promise<void>;
  /** GPU utilisation and memory per pod, when the cluster exposes them; samples carry them (mirror/usage.ts). */
  gpuUsage?: GpuUsageSource;
  log: Logger;
  clock?: { now(): Date };
  options?: Partial<MirrorControllerOptions>;
}

export interface RunningMirrorController {
  readonly synced: boolean;
  /** Resolves when nothing is queued or waiting to be reported (tests). */
  idle(): Promise<void>;
  readonly counts: {
    podCreates: number;
    podDeletes: number;
    serviceCreates: number;
    policyCreates: number;
    reports: number;
    batches: number;
    failedBatches: number;
    statusWrites: number;
  };
  /** Usage samples sent, batches, failed batches, samples refused for good. */
  readonly usage: { samples: number; batches: number; failedBatches: number; dropped: number };
  /** Resolves when every usage sample due now was acknowledged (tests). */
  usageIdle(): Promise<void>;
  stop(): Promise<void>;
}

type Obj = KubeObject & { metadata: KubeObject["metadata"] & { uid?: string; deletionTimestamp?: string } };

export function startSessionMirrorController(deps: MirrorControllerDeps): RunningMirrorController {
  const o = { ...DEFAULT_MIRROR_OPTIONS, ...deps.options };
  const log = deps.log.child({ controller: "session-mirrors", cluster: deps.clusterId });
  const now = () => (deps.clock ?? { now: () => new Date() }).now();
  const ns = o.namespace;
  const manifestOpts: MirrorManifestOptions = {
    namespace: ns,
    ...(o.gatewayNamespace ? { gatewayNamespace: o.gatewayNamespace } : {}),
    ...(o.gatewayPodLabels ? { gatewayPodLabels: o.gatewayPodLabels } : {}),
    ...(o.runtimeClassName ? { runtimeClassName: o.runtimeClassName } : {}),
  };
  const counts = {
    podCreates: 0,
    podDeletes: 0,
    serviceCreates: 0,
    policyCreates: 0,
    reports: 0,
    batches: 0,
    failedBatches: 0,
    statusWrites: 0,
  };
  const selector = `${LABELS.name}=berth-session`;
  const onError = (what: string) => (err: unknown, msg: string) => log.warn({ err: String(err), informer: what }, msg);
  const enqueue = (key: string) => queue.add(key.includes("/") ? key : `${ns}/${key}`);

  const mirrors = new Informer<SessionMirror & KubeObject>({
    kube: deps.kube,
    path: `/apis/${SessionMirrorKind.group}/${SessionMirrorKind.version}/namespaces/${ns}/sessionmirrors`,
    parse: (x) => SessionMirrorKind.schema.parse(x) as SessionMirror & KubeObject,
    onEvent: (e) => enqueue(e.key),
    onError: onError("sessionmirrors"),
  });
  const send = deps.reportUsage;
  const meter = send
    ? new UsageMeter({
        options: { intervalMs: o.usageIntervalMs, graceMs: o.usageGraceMs, batch: o.reportBatch },
        send: (samples) => send(samples),
        now: () => now().getTime(),
        onError: (err, samples) => log.warn({ err: String(err), samples }, "reporting usage failed; retrying"),
        ...(deps.gpuUsage ? { gpu: deps.gpuUsage } : {}),
      })
    : undefined;
  const pods = new Informer<Obj>({
    kube: deps.kube,
    path: `/api/v1/namespaces/${ns}/pods`,
    labelSelector: selector,
    onEvent: (e) => {
      enqueue(e.key);
      const run = meter && podRun(e.object as MeteredPodView, LABELS.sessionId);
      if (run) meter?.observe(run, e.type === "delete");
    },
    onError: onError("pods"),
  });
  const services = new Informer<Obj>({
    kube: deps.kube,
    path: `/api/v1/namespaces/${ns}/services`,
    labelSelector: selector,
    onEvent: (e) => enqueue(e.key),
    onError: onError("services"),
  });
  const policies = new Informer<Obj>({
    kube: deps.kube,
    path: `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies`,
    labelSelector: selector,
    onEvent: (e) => enqueue(e.key),
    onError: onError("networkpolicies"),
  });
  const informers = [mirrors, pods, services, policies];

  // What was last reported per mirror key, and what the control plane still has to get.
  const reported = new Map<string, WireStatusReport>();
  const pending = new Map<string, WireStatusReport>();
  const phases = new Map<string, string>();
  let flushTimer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> | undefined;
  let failures = 0;
  let stopped = false;

  const scheduleFlush = (delay = o.reportDebounceMs) => {
    if (stopped || flushTimer) return;
    flushTimer = setTimeout(() => {
      flushTimer = undefined;
      flushing = flush().finally(() => {
        flushing = undefined;
        if (pending.size > 0) scheduleFlush(failures > 0 ? Math.min(30_000, 250 * 2 ** Math.min(failures, 7)) : 0);
      });
    }, delay);
  };

  async function flush(heartbeat = false): Promise<void> {
    if (pending.size === 0 && !heartbeat) return;
    const batch = [...pending.entries()].slice(0, o.reportBatch);
    for (const [k] of batch) pending.delete(k);
    try {
      await deps.report(batch.map(([, r]) => r));
      failures = 0;
      counts.batches++;
      counts.reports += batch.length;
    } catch (err) {
      failures++;
      counts.failedBatches++;
      log.warn(
        { err: String(err), reports: batch.length, attempt: failures },
        "reporting session status failed; retrying",
      );
      // Put back what no newer state replaced meanwhile.
      for (const [k, r] of batch) if (!pending.has(k)) pending.set(k, r);
    }
  }

  const toReport = (key: string, m: SessionMirror, r: MirrorReport) => {
    const wire: WireStatusReport = {
      session: m.spec.sessionId,
      phase: r.phase,
      ...(r.node ? { node: r.node } : {}),
      reason: r.reason,
      message: r.message,
      observed_generation: m.spec.revision,
      at: now().toISOString(),
    };
    const last = reported.get(key);
    reported.set(key, wire);
    if (
      last &&
      last.phase === wire.phase &&
      last.reason === wire.reason &&
      last.node === wire.node &&
      last.observed_generation === wire.observed_generation &&
      last.message === wire.message
    )
      return;
    pending.set(key, wire);
    scheduleFlush();
  };

  // The mirror is passed in, never kept in a shared variable: up to `concurrency` reconciles run at once,
  // and a release must patch the finalizers of its own mirror.
  async function apply(a: MirrorAction, current: SessionMirror): Promise<void> {
    if (a.kind === "createPod") {
      const res = await deps.kube.request("POST", `/api/v1/namespaces/${ns}/pods`, { body: a.manifest });
      if (res.status === 201) counts.podCreates++;
      else if (res.status !== 409)
        throw new Error(
          `creating pod ${a.manifest.metadata.name}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`,
        );
    } else if (a.kind === "deletePod") {
      const res = await deps.kube.request("DELETE", `/api/v1/namespaces/${ns}/pods/${a.name}`, {
        body: {
          apiVersion: "v1",
          kind: "DeleteOptions",
          ...(a.uid ? { preconditions: { uid: a.uid } } : {}),
          ...(a.graceSeconds !== undefined ? { gracePeriodSeconds: a.graceSeconds } : {}),
        },
      });
      if (res.status < 300) counts.podDeletes++;
      else if (res.status !== 404 && res.status !== 409) throw new Error(`deleting pod ${a.name}: ${res.status}`);
    } else if (a.kind === "createService") {
      const res = await deps.kube.request("POST", `/api/v1/namespaces/${ns}/services`, { body: a.manifest });
      if (res.status === 201) counts.serviceCreates++;
      else if (res.status !== 409)
        throw new Error(
          `creating service ${a.manifest.metadata.name}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`,
        );
    } else if (a.kind === "deleteService" || a.kind === "deleteNetworkPolicy") {
      const path =
        a.kind === "deleteService"
          ? `/api/v1/namespaces/${ns}/services/${a.name}`
          : `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies/${a.name}`;
      const res = await deps.kube.request("DELETE", path);
      if (res.status >= 300 && res.status !== 404) throw new Error(`deleting ${path}: ${res.status}`);
    } else if (a.kind === "releaseMirror") {
      const name = current.metadata.name;
      const res = await deps.kube.request(
        "PATCH",
        `/apis/${SessionMirrorKind.group}/${SessionMirrorKind.version}/namespaces/${ns}/sessionmirrors/${name}`,
        { body: { metadata: { finalizers: a.finalizers, resourceVersion: current.metadata.resourceVersion } } },
      );
      if (res.status === 409) throw new Error(`mirror ${name} changed while being released; retrying`);
      if (res.status >= 300 && res.status !== 404) throw new Error(`releasing mirror ${name}: ${res.status}`);
    } else {
      const res = await deps.kube.request("POST", `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies`, {
        body: a.manifest,
      });
      if (res.status === 201) counts.policyCreates++;
      else if (res.status !== 409)
        throw new Error(
          `creating network policy ${a.manifest.metadata.name}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`,
        );
    }
  }

  async function reconcile(key: string): Promise<{ requeueAfterMs?: number } | undefined> {
    const m = mirrors.store.get(key);
    if (!m) {
      // Gone: say so once (pause and terminate wait for this), with the last revision we saw.
      const last = reported.get(key);
      if (last && last.phase !== "Terminated") {
        reported.delete(key);
        phases.delete(key);
        pending.set(key, {
          ...last,
          phase: "Terminated",
          reason: "MirrorDeleted",
          message: "the mirror and its pod are gone",
          node: null,
          at: now().toISOString(),
        });
        scheduleFlush();
      }
      return undefined;
    }
    if (m.spec.cluster !== deps.clusterId) {
      log.warn({ key, cluster: m.spec.cluster }, "a mirror for another cluster; ignored");
      return undefined;
    }
    const plan = planMirror(
      {
        mirror: m,
        now: now(),
        ...(pods.store.get(key) ? { pod: pods.store.get(key) as PodView } : {}),
        ...(services.store.get(key) ? { service: services.store.get(key) as ObjectView } : {}),
        ...(policies.store.get(key) ? { networkPolicy: policies.store.get(key) as ObjectView } : {}),
      },
      manifestOpts,
    );
    // Creations are independent of each other: in parallel (one round trip instead of three).
    const creates = plan.actions.filter((a) => a.kind.startsWith("create"));
    await Promise.all(creates.map((a) => apply(a, m)));
    for (const a of plan.actions) if (!a.kind.startsWith("create")) await apply(a, m);
    toReport(key, m, plan.report);
    if (o.writeStatus && phases.get(key) !== plan.report.phase && plan.report.phase !== "Terminated") {
      const res = await deps.kube.request(
        "PATCH",
        `/apis/${SessionMirrorKind.group}/${SessionMirrorKind.version}/namespaces/${ns}/sessionmirrors/${m.metadata.name}/status`,
        {
          body: {
            status: {
              phase: plan.report.phase,
              pod: m.metadata.name,
              ...(plan.report.node ? { node: plan.report.node } : {}),
              observedGeneration: m.metadata.generation,
            },
          },
        },
      );
      if (res.status < 300) {
        counts.statusWrites++;
        phases.set(key, plan.report.phase);
      }
    }
    return plan.requeueAfterMs !== undefined ? { requeueAfterMs: plan.requeueAfterMs } : undefined;
  }

  const queue = new WorkQueue({
    concurrency: o.concurrency,
    process: reconcile,
    onError: (key, err, attempt) => log.warn({ key, attempt, err: String(err) }, "mirror reconcile failed; retrying"),
  });

  for (const i of informers) i.start();
  // The resync: every mirror looked at again, and every state sent again (the heartbeat).
  const resync = setInterval(() => {
    if (stopped || !mirrors.synced) return;
    for (const key of mirrors.store.keys()) queue.add(key);
    for (const [k, r] of reported) if (!pending.has(k)) pending.set(k, { ...r, at: now().toISOString() });
    if (pending.size === 0) void flush(true);
    else scheduleFlush(0);
  }, o.resyncMs);
  resync.unref?.();
  // The first heartbeat as soon as the mirrors are known.
  void Promise.all(informers.map((i) => i.waitForSync(120_000)))
    .then(() => {
      if (pending.size === 0 && !stopped) void flush(true);
    })
    .catch((err: unknown) => log.warn({ err: String(err) }, "watches did not sync yet"));

  return {
    get synced() {
      return informers.every((i) => i.synced);
    },
    counts,
    usage: meter?.counts ?? { samples: 0, batches: 0, failedBatches: 0, dropped: 0 },
    usageIdle: async () => meter?.idle(),
    async idle() {
      for (let i = 0; i < 1000; i++) {
        await queue.drained();
        await flushing;
        if (pending.size === 0 && queue.length === 0 && !flushTimer) return;
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async stop() {
      stopped = true;
      clearInterval(resync);
      clearTimeout(flushTimer);
      await queue.stop();
      await flushing;
      // A last attempt for what changed just before the stop (a follower resends it on its first resync anyway).
      if (pending.size > 0) await flush().catch(() => {});
      await meter?.stop();
      await Promise.all(informers.map((i) => i.stop()));
    },
  };
}
