// The GPU-cluster side: turns each SessionMirror in the sessions namespace into its Pod (mirror/plan.ts
// decides; this file observes and applies; the session gateway finds the pod through `routes`, no Service
// per session), keeps the namespace's one NetworkPolicy
// (every session pod, ingress from the gateway only) in place before any session pod is created, and
// reports every change of phase to the control plane's internal plane. The operator process runs it
// while it leads (startSessionMirrorController), next to its inventory reporter.
//
// Reports: POST /internal/v1/sessions/status with {session: <ses_ id>, phase, node, reason, message,
// observed_generation: <the mirror's spec.revision>, at}. A change is sent within `reportDebounceMs`;
// every mirror's state is sent again each `resyncMs` (an empty batch when there is none), which is also
// the heartbeat by which the control plane knows the cluster is alive. A failed batch is retried with
// backoff; a newer state of a session replaces an older one still waiting to be sent.
import { DEFAULT_SESSIONS_NAMESPACE, LABELS, type SessionMirror, SessionMirrorKind } from "@berth/crds";
import type { Logger } from "pino";
import type { KubeApi } from "../kube/client.ts";
import { Informer, type KubeObject } from "../kube/informer.ts";
import { WorkQueue } from "../kube/workqueue.ts";
import { type MirrorManifestOptions, SESSIONS_POLICY_NAME } from "./manifests.ts";
import {
  type ClaimView,
  type MirrorAction,
  type MirrorObserved,
  type MirrorReport,
  type ObjectView,
  type PodView,
  type PolicyView,
  planMirror,
  planSessionsPolicy,
} from "./plan.ts";
import type { RoutablePod, SessionRoutes } from "./routes.ts";
import { UnseenCreates } from "./unseen.ts";
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
  /** CIDRs session pods may reach inside the private ranges (manifests.ts, the sessions' policy). */
  egressAllow?: readonly string[];
  /** A started session app not Ready after this long fails the session (plan.ts; default 10 min). */
  appReadyTimeoutMs?: number;
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
  /**
   * How long, at most, a create this controller made (a pod) is trusted while its watch has not
   * shown the object (nor gone past it): a reconcile in that window does not create it again
   * (mirror/unseen.ts). Long, since a loaded operator's watch can run seconds behind.
   */
  unseenCreateMs: number;
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
  unseenCreateMs: 30_000,
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
  /**
   * True when the named node may not exist (the operator's node informer, synced, does not have it). A pod
   * being deleted there is forced at once once the apiserver confirms the node is gone (404). Without it,
   * stuck pods are forced only after their grace period.
   */
  nodeGone?(name: string): boolean;
  /** Fed from the pod watch: where each session's application answers (the gateway's table). */
  routes?: SessionRoutes;
}

export interface RunningMirrorController {
  readonly synced: boolean;
  /** Resolves when nothing is queued or waiting to be reported (tests). */
  idle(): Promise<void>;
  readonly counts: {
    podCreates: number;
    podDeletes: number;
    /** Writes of the namespace's NetworkPolicy (created, or put back after someone changed it). */
    policyWrites: number;
    /** Creates answered 409 (the object was there): each one a request the apiserver served for nothing. */
    conflictingCreates: number;
    reports: number;
    batches: number;
    failedBatches: number;
    statusWrites: number;
  };
  /** The resourceVersion of the namespace's policy the last look found as written (tests). */
  readonly policyAsWritten: string | undefined;
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
    ...(o.egressAllow?.length ? { egressAllow: o.egressAllow } : {}),
    ...(o.appReadyTimeoutMs !== undefined ? { appReadyTimeoutMs: o.appReadyTimeoutMs } : {}),
  };
  const counts = {
    podCreates: 0,
    podDeletes: 0,
    policyWrites: 0,
    conflictingCreates: 0,
    reports: 0,
    batches: 0,
    failedBatches: 0,
    statusWrites: 0,
  };
  const selector = `${LABELS.name}=berth-session`;
  const onError = (what: string) => (err: unknown, msg: string) => log.warn({ err: String(err), informer: what }, msg);
  const enqueue = (key: string) => queue.add(key.includes("/") ? key : `${ns}/${key}`);
  // The namespace's policy is reconciled on the same queue under its own key (never a mirror's: mirror
  // keys are `<ns>/<name>`).
  const policyStoreKey = `${ns}/${SESSIONS_POLICY_NAME}`;
  const POLICY_KEY = `policy:${policyStoreKey}`;
  const policyPath = `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies`;
  // Pod creates not yet seen by the pod watch, per store key.
  const unseenPods = new UnseenCreates({
    ttlMs: o.unseenCreateMs,
    now: () => Date.now(),
    passed: (rv) => pods.passed(rv),
  });

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
      unseenPods.seen(e.key, e.object.metadata.uid);
      deps.routes?.observe(e.object as RoutablePod, e.type === "delete");
      enqueue(e.key);
      const run = meter && podRun(e.object as MeteredPodView, LABELS.sessionId);
      if (run) meter?.observe(run, e.type === "delete");
    },
    onError: onError("pods"),
  });
  // The namespace's policy and the per-session ones of earlier versions (to remove them): both carry
  // managed-by=berth-operator.
  const policies = new Informer<Obj>({
    kube: deps.kube,
    path: policyPath,
    labelSelector: `${LABELS.managedBy}=berth-operator`,
    onEvent: (e) => {
      if (e.key !== policyStoreKey) return enqueue(e.key);
      // Deleted or changed by someone: no pod is created until it is back as we wrote it (our own writes
      // come back unchanged).
      if (e.type === "delete" || planSessionsPolicy(e.object as PolicyView, manifestOpts).kind !== "none") {
        policyReady = false;
        policyEpoch++;
      }
      queue.add(POLICY_KEY);
    },
    onError: onError("networkpolicies"),
  });
  const informers = [mirrors, pods, policies];

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
      // The cards the running pod holds: it is pinned to them (docs/dev/gpu-sharing.md).
      ...(r.phase === "Running" && m.spec.resources.gpuAssignment
        ? { gpu_devices: m.spec.resources.gpuAssignment.cards }
        : {}),
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

  /**
   * POSTs a pod; true when this call created it. A 409 means one of that name is there too:
   * either way the watch has not shown it yet, so it is recorded as unseen.
   */
  async function createPod(manifest: { metadata: { name: string } }): Promise<boolean> {
    const res = await deps.kube.request("POST", `/api/v1/namespaces/${ns}/pods`, { body: manifest });
    const key = `${ns}/${manifest.metadata.name}`;
    if (res.status === 201) {
      unseenPods.created(key, ...createdOf(res.body));
      return true;
    }
    if (res.status === 409) {
      unseenPods.created(key);
      counts.conflictingCreates++;
      return false;
    }
    throw new Error(`creating pod ${manifest.metadata.name}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  }

  // The mirror is passed in, never kept in a shared variable: up to `concurrency` reconciles run at once,
  // and a release must patch the finalizers of its own mirror.
  async function apply(a: MirrorAction, current: SessionMirror): Promise<void> {
    if (a.kind === "createPod") {
      if (await createPod(a.manifest)) counts.podCreates++;
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
    } else if (a.kind === "createClaim") {
      // 409: made already (by this operator before a restart, or a reconcile of another session).
      const res = await deps.kube.request("POST", `/api/v1/namespaces/${ns}/persistentvolumeclaims`, {
        body: a.manifest,
      });
      if (res.status >= 300 && res.status !== 409)
        throw new Error(
          `creating claim ${a.manifest.metadata.name}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`,
        );
    } else if (a.kind === "deleteNetworkPolicy") {
      const path = `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies/${a.name}`;
      const res = await deps.kube.request("DELETE", path);
      if (res.status >= 300 && res.status !== 404) throw new Error(`deleting ${path}: ${res.status}`);
    } else {
      const name = current.metadata.name;
      const res = await deps.kube.request(
        "PATCH",
        `/apis/${SessionMirrorKind.group}/${SessionMirrorKind.version}/namespaces/${ns}/sessionmirrors/${name}`,
        { body: { metadata: { finalizers: a.finalizers, resourceVersion: current.metadata.resourceVersion } } },
      );
      if (res.status === 409) throw new Error(`mirror ${name} changed while being released; retrying`);
      if (res.status >= 300 && res.status !== 404) throw new Error(`releasing mirror ${name}: ${res.status}`);
    }
  }

  // The namespace's NetworkPolicy. `policyReady` says it was seen in place (or written) since it was
  // last seen deleted; pods are created only while it holds. `policyEpoch` counts deletions seen, so an
  // ensure that read the policy just before a deletion does not claim it is there.
  let policyReady = false;
  let policyEpoch = 0;
  let policyAsWritten: string | undefined;
  let ensuring: Promise<void> | undefined;

  async function nodeAbsent(name: string): Promise<boolean> {
    const res = await deps.kube.request("GET", `/api/v1/nodes/${encodeURIComponent(name)}`);
    return res.status === 404;
  }

  async function readPolicy(): Promise<PolicyView | undefined> {
    const res = await deps.kube.request("GET", `${policyPath}/${SESSIONS_POLICY_NAME}`);
    if (res.status === 404) return undefined;
    if (res.status >= 300) throw new Error(`reading network policy ${SESSIONS_POLICY_NAME}: ${res.status}`);
    return res.body as PolicyView;
  }

  async function ensurePolicy(): Promise<undefined> {
    const epoch = policyEpoch;
    // Before the first list, the store knows nothing: ask.
    let observed = policies.synced
      ? (policies.store.get(policyStoreKey) as PolicyView | undefined)
      : await readPolicy();
    for (let attempt = 1; ; attempt++) {
      const step = planSessionsPolicy(observed, manifestOpts);
      if (step.kind === "none") {
        policyAsWritten = observed?.metadata.resourceVersion;
        break;
      }
      const res =
        step.kind === "create"
          ? await deps.kube.request("POST", policyPath, { body: step.manifest })
          : await deps.kube.request("PUT", `${policyPath}/${SESSIONS_POLICY_NAME}`, { body: step.manifest });
      if (res.status < 300) {
        counts.policyWrites++;
        log.info(
          { kind: "NetworkPolicy", namespace: ns, name: SESSIONS_POLICY_NAME, step: step.kind },
          "sessions network policy written",
        );
        break;
      }
      // 409: the watch was behind (it exists, or changed since it was read): look at what is there.
      if (res.status !== 409 || attempt >= 3)
        throw new Error(
          `writing network policy ${SESSIONS_POLICY_NAME}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`,
        );
      observed = await readPolicy();
    }
    if (epoch === policyEpoch) policyReady = true;
    return undefined;
  }

  // One ensure at a time (two at once would both POST, one for a 409).
  const ensureOnce = (): Promise<void> =>
    (ensuring ??= ensurePolicy().finally(() => {
      ensuring = undefined;
    }));

  /** Resolves once the namespace's policy is in place (for the reconciles waiting to create a pod). */
  async function policyInPlace(): Promise<void> {
    while (!policyReady) await ensureOnce();
  }

  /** A look that starts now (the queue's, after a watch event): one already running may have read too early. */
  async function policyLookedAt(): Promise<undefined> {
    await ensuring?.catch(() => {});
    await ensureOnce();
    return undefined;
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
    const pod = pods.store.get(key) as PodView | undefined;
    // The watch may show an object before its create's answer arrives: the store has it, the record goes.
    if (pod) unseenPods.seen(key, pod.metadata.uid);
    const unseenPod = pod ? undefined : unseenPods.pending(key);
    // Claims of the volumes the operator makes itself, read while the pod is still to be made.
    const claims: Record<string, ClaimView> = {};
    if (!pod && !m.metadata.deletionTimestamp)
      for (const v of m.spec.volumes) {
        if (v.storageClass === undefined) continue;
        const res = await deps.kube.request<ClaimView>(
          "GET",
          `/api/v1/namespaces/${ns}/persistentvolumeclaims/${v.claimName}`,
        );
        if (res.status === 200) claims[v.claimName] = res.body;
        else if (res.status !== 404) throw new Error(`reading claim ${v.claimName}: ${res.status}`);
      }
    const observed: MirrorObserved = {
      mirror: m,
      claims,
      now: now(),
      ...(pod ? { pod } : {}),
      ...(policies.store.get(key) ? { networkPolicy: policies.store.get(key) as ObjectView } : {}),
      ...(unseenPod !== undefined ? { unseenPod: { expiresInMs: unseenPod } } : {}),
    };
    let plan = planMirror(observed, manifestOpts);
    // A pod being deleted on a node that is gone is forced at once. The node watch only hints it (it may
    // not show a new node yet); the apiserver's 404 decides, since forcing a pod off a live kubelet would
    // free its name and GPU while its container still runs. Asked only while the pod goes, which is rare.
    const node = pod?.spec?.nodeName;
    if (
      node &&
      deps.nodeGone?.(node) &&
      (pod?.metadata.deletionTimestamp || plan.actions.some((a) => a.kind === "deletePod")) &&
      (await nodeAbsent(node))
    )
      plan = planMirror({ ...observed, podNodeGone: true }, manifestOpts);
    // No session pod without the namespace's policy, and an old per-session policy goes only once the
    // namespace's one covers its pod.
    if (
      !m.metadata.deletionTimestamp &&
      plan.actions.some((a) => a.kind === "createPod" || a.kind === "deleteNetworkPolicy")
    )
      await policyInPlace();
    // Creations are independent of each other: in parallel (one round trip instead of two).
    const creates = plan.actions.filter((a) => a.kind.startsWith("create"));
    await Promise.all(creates.map((a) => apply(a, m)));
    for (const a of plan.actions) if (!a.kind.startsWith("create")) await apply(a, m);
    toReport(key, m, plan.report);
    if (o.writeStatus && phases.get(key) !== plan.report.phase && plan.report.phase !== "Terminated") {
      const status = {
        phase: plan.report.phase,
        pod: m.metadata.name,
        ...(plan.report.node ? { node: plan.report.node } : {}),
        observedGeneration: m.metadata.generation,
      };
      // The mirror may say so already (a new leader, whose `phases` is empty, finds every status written).
      const has = m.status;
      const same =
        has?.phase === status.phase &&
        has.pod === status.pod &&
        has.node === status.node &&
        has.observedGeneration === status.observedGeneration;
      const res = same
        ? undefined
        : await deps.kube.request(
            "PATCH",
            `/apis/${SessionMirrorKind.group}/${SessionMirrorKind.version}/namespaces/${ns}/sessionmirrors/${m.metadata.name}/status`,
            { body: { status } },
          );
      if (res && res.status < 300) counts.statusWrites++;
      if (!res || res.status < 300) phases.set(key, plan.report.phase);
    }
    return plan.requeueAfterMs !== undefined ? { requeueAfterMs: plan.requeueAfterMs } : undefined;
  }

  const queue = new WorkQueue({
    concurrency: o.concurrency,
    process: (key) => (key === POLICY_KEY ? policyLookedAt() : reconcile(key)),
    onError: (key, err, attempt) => log.warn({ key, attempt, err: String(err) }, "mirror reconcile failed; retrying"),
  });

  for (const i of informers) i.start();
  // The policy first: created at start, before any mirror asks for a pod.
  queue.add(POLICY_KEY);
  // The resync: every mirror looked at again, and every state sent again (the heartbeat).
  const resync = setInterval(() => {
    if (stopped || !mirrors.synced) return;
    queue.add(POLICY_KEY);
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
    get policyAsWritten() {
      return policyAsWritten;
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

/** The uid and resourceVersion a create answered with. */
function createdOf(body: unknown): [uid?: string, resourceVersion?: string] {
  const m = (body as { metadata?: { uid?: unknown; resourceVersion?: unknown } } | undefined)?.metadata;
  return [
    typeof m?.uid === "string" ? m.uid : undefined,
    typeof m?.resourceVersion === "string" ? m.resourceVersion : undefined,
  ];
}
